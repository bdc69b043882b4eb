import { hexOf, type IdentifierHash, type MemberRejection, type RejectedMember } from './destination-types.js';

/**
 * Builds the multi-key rows of Meta's customer-file custom audiences (SPEC 10.3) and cuts them into
 * requests. Facts (developers.facebook.com/docs/marketing-api/audiences/guides/custom-audiences,
 * "Multi-key matching", "Hashing and normalization", "Replace users API"; …/reference/custom-audience/users):
 * `payload.schema` names the keys once for every row of `payload.data`; a key a row lacks is `""`;
 * everything but `MADID` and `EXTERN_ID` is a SHA-256 in lowercase hex; `MADID` is lowercase with its
 * hyphens; at most 10,000 rows per request; and a session keeps the schema of its first batch
 * ("changing the schema mid-session will result in errors", stated for `usersreplace`; held here for
 * `users` too, so it cannot matter). Meta documents no byte limit; bodies over about 65,000 bytes
 * fail in practice (rudderlabs/rudder-transformer batches fb_custom_audience at 60 KB), hence
 * META_MAX_REQUEST_BYTES.
 */

export const META_MAX_ROWS_PER_REQUEST = 10_000;

/** The keys this service sends, in schema order. */
export const META_SCHEMA_KEYS = ['EMAIL', 'PHONE', 'FN', 'LN', 'COUNTRY', 'ZIP', 'MADID', 'EXTERN_ID'] as const;
export type MetaSchemaKey = (typeof META_SCHEMA_KEYS)[number];

const MOBILE_AD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_EXTERN_ID = 255;

/**
 * One person as the sync reads it for Meta: Meta-form hashes (email trimmed and lowercased, phone
 * digits without `+`, names without punctuation, country lowercase, zip without spaces), the mobile
 * ad id in clear, and the advertiser's own id when the sync sends one.
 */
export interface MetaMemberInput<Key> {
  key: Key;
  emails: readonly IdentifierHash[];
  phones: readonly IdentifierHash[];
  firstName?: IdentifierHash | null;
  lastName?: IdentifierHash | null;
  country?: IdentifierHash | null;
  zip?: IdentifierHash | null;
  mobileAdId?: string | null;
  externId?: string | null;
}

/** A person's values per key; a person with several emails or phones gives one row per email or phone. */
interface MetaMemberValues {
  emails: string[];
  phones: string[];
  single: Partial<Record<Exclude<MetaSchemaKey, 'EMAIL' | 'PHONE'>, string>>;
}

/** Rows that go in one request, with the keys of the people they belong to (a person's rows are never split). */
export interface MetaRowBatch<Key> {
  keys: Key[];
  rows: string[][];
}

export interface MetaUploadPlan<Key> {
  /** Fixed for the whole session: the keys any person of the upload has, in META_SCHEMA_KEYS order. */
  schema: MetaSchemaKey[];
  batches: MetaRowBatch<Key>[];
  rejected: RejectedMember<Key>[];
  totalRows: number;
}

/** A person's values, or why they cannot be sent. */
export function readMetaMember<Key>(input: MetaMemberInput<Key>): MetaMemberValues | { rejection: MemberRejection } {
  const emails = distinctHex(input.emails);
  const phones = distinctHex(input.phones);
  if (emails === undefined || phones === undefined) return { rejection: 'invalid_hash' };
  const single: MetaMemberValues['single'] = {};
  for (const [key, hash] of [
    ['FN', input.firstName],
    ['LN', input.lastName],
    ['COUNTRY', input.country],
    ['ZIP', input.zip],
  ] as const) {
    if (hash === undefined || hash === null) continue;
    const hex = hexOf(hash);
    if (hex === undefined) return { rejection: 'invalid_hash' };
    single[key] = hex;
  }
  if (input.mobileAdId) {
    const madid = input.mobileAdId.trim().toLowerCase();
    if (!MOBILE_AD_ID.test(madid)) return { rejection: 'invalid_field' };
    single.MADID = madid;
  }
  if (input.externId) {
    // Control characters would not survive Meta's matching; the id is the advertiser's, never a raw identifier.
    if (input.externId.length > MAX_EXTERN_ID || /[\u0000-\u001f\u007f]/.test(input.externId)) return { rejection: 'invalid_field' };
    single.EXTERN_ID = input.externId;
  }
  // A name or place alone matches no one: a row needs a key of its own, or the whole name-and-place set.
  const named = single.FN !== undefined && single.LN !== undefined && single.COUNTRY !== undefined && single.ZIP !== undefined;
  if (emails.length === 0 && phones.length === 0 && !single.MADID && !single.EXTERN_ID && !named) return { rejection: 'unmatchable' };
  return { emails, phones, single };
}

/**
 * A person's rows under `schema`: as many as their emails or phones (at least one), each with the
 * n-th email and n-th phone and the same other keys, `""` where they have none.
 */
export function metaRowsOf(values: MetaMemberValues, schema: readonly MetaSchemaKey[]): string[][] {
  const count = Math.max(values.emails.length, values.phones.length, 1);
  const rows: string[][] = [];
  for (let index = 0; index < count; index++) {
    rows.push(
      schema.map((key) => {
        if (key === 'EMAIL') return values.emails[index] ?? '';
        if (key === 'PHONE') return values.phones[index] ?? '';
        return values.single[key] ?? '';
      }),
    );
  }
  return rows;
}

/** The bytes a request adds for the envelope around its rows, with the widest session numbers. */
export function metaEnvelopeBytes(schema: readonly MetaSchemaKey[]): number {
  return Buffer.byteLength(
    JSON.stringify({
      payload: { schema, data: [] },
      session: {
        session_id: Number.MAX_SAFE_INTEGER,
        batch_seq: 999_999_999,
        last_batch_flag: false,
        estimated_num_total: 999_999_999_999,
      },
    }),
  );
}

/**
 * Every person read and checked, and packed in order into requests of at most 10,000 rows and
 * `maxRequestBytes` bytes of JSON body; a person whose rows alone do not fit is rejected
 * `too_large` before anything is sent. The schema is the keys these people have, unless the caller
 * fixes one: a session streamed over several plans keeps the schema of its first batch.
 */
export function planMetaUpload<Key>(
  inputs: readonly MetaMemberInput<Key>[],
  maxRequestBytes: number,
  fixedSchema?: readonly MetaSchemaKey[],
): MetaUploadPlan<Key> {
  const rejected: RejectedMember<Key>[] = [];
  const members: { key: Key; values: MetaMemberValues }[] = [];
  const present = new Set<MetaSchemaKey>();
  for (const input of inputs) {
    const values = readMetaMember(input);
    if ('rejection' in values) {
      rejected.push({ key: input.key, reason: values.rejection });
      continue;
    }
    members.push({ key: input.key, values });
    if (values.emails.length > 0) present.add('EMAIL');
    if (values.phones.length > 0) present.add('PHONE');
    for (const key of Object.keys(values.single) as MetaSchemaKey[]) present.add(key);
  }
  const schema = fixedSchema ? [...fixedSchema] : META_SCHEMA_KEYS.filter((key) => present.has(key));
  const envelope = metaEnvelopeBytes(schema);
  const batches: MetaRowBatch<Key>[] = [];
  let current: MetaRowBatch<Key> = { keys: [], rows: [] };
  let bytes = envelope;
  let totalRows = 0;
  for (const member of members) {
    const rows = metaRowsOf(member.values, schema);
    // Each row costs its JSON and a comma; the first row of a request has no comma, so this over-counts by one.
    const rowBytes = rows.reduce((sum, row) => sum + Buffer.byteLength(JSON.stringify(row)) + 1, 0);
    if (envelope + rowBytes > maxRequestBytes) {
      rejected.push({ key: member.key, reason: 'too_large' });
      continue;
    }
    if (current.rows.length + rows.length > META_MAX_ROWS_PER_REQUEST || bytes + rowBytes > maxRequestBytes) {
      batches.push(current);
      current = { keys: [], rows: [] };
      bytes = envelope;
    }
    current.keys.push(member.key);
    current.rows.push(...rows);
    bytes += rowBytes;
    totalRows += rows.length;
  }
  if (current.rows.length > 0) batches.push(current);
  return { schema, batches, rejected, totalRows };
}

function distinctHex(hashes: readonly IdentifierHash[]): string[] | undefined {
  const seen = new Set<string>();
  for (const hash of hashes) {
    const hex = hexOf(hash);
    if (hex === undefined) return undefined;
    seen.add(hex);
  }
  return [...seen];
}
