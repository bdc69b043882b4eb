import { deriveExternalId } from './normalization/external-id.js';
import {
  type IdentifierErrors,
  type MatchedKey,
  matchedKeysOf,
  type NormalizedIdentifiers,
  normalizeIdentifiers,
} from './normalization/identifier-normalization.js';
import { type IdentifierHash, type IdentifierKind, type IdentifierPlatform, kindsOf, mergeIdentifiers } from './person-identifiers.js';
import { CONSENT_VALUES, type ConsentValue } from './person.entity.js';

/**
 * One person as a write names it (a batch row or a PATCH body, SPEC 10.1), read and checked
 * without the database. Raw identifiers stay inside this module and the normalisation module:
 * what a PersonWrite carries is hashes, the country and postal code, the mobile ad id, and error
 * codes (never a value). The codes are those of a batch's `rejected[].errors`, under field paths.
 */

export const MAX_EXTERNAL_ID_LENGTH = 255;
/** Rows of one batch (SPEC 10.1), and of one change of an upload audience's members. */
export const MAX_BATCH_PEOPLE = 1_000;
export const MAX_TRAITS = 100;
export const MAX_TRAIT_STRING_LENGTH = 1000;
export const TRAIT_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export type TraitValue = string | number | boolean;

/** Fields a client may echo back from a response: accepted and ignored (SPEC section 3). */
const READ_ONLY_FIELDS = new Set(['id', 'customer', 'matched_keys', 'audiences', 'created_at', 'updated_at']);
const FIELDS = new Set(['external_id', 'identifiers', 'traits', 'consent']);
const CONSENT_FIELDS = { ad_user_data: 'adUserData', ad_personalization: 'adPersonalization' } as const;

/** The identifier fields of SPEC 10.1 and the stored kinds each one replaces when a write names it. */
const KINDS_NAMED_BY: Record<string, IdentifierKind[]> = {
  email: ['email'],
  email_sha256: ['email'],
  phone: ['phone'],
  phone_sha256: ['phone'],
  first_name: ['first_name'],
  last_name: ['last_name'],
  country_code: ['country'],
  postal_code: ['zip'],
};

export interface ConsentWrite {
  adUserData?: ConsentValue;
  adPersonalization?: ConsentValue;
}

export interface PersonWrite {
  /** Given by the client, trimmed, or derived from the identifiers (SPEC 10.1); undefined when the write has neither. */
  externalId?: string;
  /** The external_id is derived, not the client's: a removal then also matches by the identifiers (SPEC 10.2). */
  externalIdDerived: boolean;
  /** The raw `identifiers` object, kept only until `normalizeWith` has run with the stored country. */
  identifiers?: Record<string, unknown>;
  normalized?: NormalizedIdentifiers;
  /** The kinds of stored hash this write replaces (SPEC 10.1: a write replaces the identifiers it names). */
  namedKinds: Set<IdentifierKind>;
  namesCountryCode: boolean;
  namesPostalCode: boolean;
  namesMobileAdId: boolean;
  /** A `null` value removes the key (SPEC 10.1). */
  traits?: Record<string, TraitValue | null>;
  consent: ConsentWrite;
  errors: IdentifierErrors;
}

/** What a write merges into: the stored person's columns and hashes. */
export interface StoredPerson {
  id: number;
  externalId: string;
  traits: Record<string, TraitValue>;
  consentAdUserData: ConsentValue;
  consentAdPersonalization: ConsentValue;
  countryCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  googleIdentifiers: Buffer;
  metaIdentifiers: Buffer;
}

/** A person's columns after a write, ready to store. */
export interface PersonColumns {
  externalId: string;
  traits: Record<string, TraitValue>;
  consentAdUserData: ConsentValue;
  consentAdPersonalization: ConsentValue;
  countryCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  matchedKeys: MatchedKey[];
  /** Packed (person-identifiers.ts): the stored hashes of the kinds the write does not name, and the write's. */
  googleIdentifiers: Buffer;
  metaIdentifiers: Buffer;
}

function addError(errors: IdentifierErrors, path: string, code: string): void {
  (errors[path] ??= []).push(code);
}

/** Reads one row; `errors` is empty when it may be applied. */
export function readPersonWrite(row: unknown): PersonWrite {
  const write: PersonWrite = {
    namedKinds: new Set(),
    externalIdDerived: false,
    namesCountryCode: false,
    namesPostalCode: false,
    namesMobileAdId: false,
    consent: {},
    errors: {},
  };
  const errors = write.errors;
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    addError(errors, 'non_field_errors', 'invalid_person');
    return write;
  }
  const input = row as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!FIELDS.has(key) && !READ_ONLY_FIELDS.has(key)) addError(errors, key, 'unknown_field');
  }

  if (input.external_id !== undefined && input.external_id !== null) {
    const text = typeof input.external_id === 'string' ? input.external_id.trim() : undefined;
    if (text === undefined || text.length === 0 || text.length > MAX_EXTERNAL_ID_LENGTH)
      addError(errors, 'external_id', 'invalid_external_id');
    else write.externalId = text;
  }

  if (input.identifiers !== undefined) {
    const normalized = normalizeIdentifiers(input.identifiers);
    Object.assign(errors, normalized.errors);
    if (Object.keys(normalized.errors).length === 0) {
      const identifiers = input.identifiers as Record<string, unknown>;
      write.identifiers = identifiers;
      write.normalized = normalized;
      for (const key of Object.keys(identifiers)) for (const kind of KINDS_NAMED_BY[key] ?? []) write.namedKinds.add(kind);
      write.namesCountryCode = 'country_code' in identifiers;
      write.namesPostalCode = 'postal_code' in identifiers;
      write.namesMobileAdId = 'mobile_ad_id' in identifiers;
    }
  }

  if (input.traits !== undefined) write.traits = readTraits(input.traits, errors);
  if (input.consent !== undefined) write.consent = readConsent(input.consent, errors);

  if (write.externalId === undefined && write.normalized !== undefined) {
    write.externalId = deriveExternalId(write.normalized.google);
    write.externalIdDerived = write.externalId !== undefined;
  }
  if (write.externalId === undefined && errors.external_id === undefined && Object.keys(errors).length === 0)
    addError(errors, 'external_id', 'missing_external_id');
  return write;
}

function readTraits(value: unknown, errors: IdentifierErrors): Record<string, TraitValue | null> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    addError(errors, 'traits', 'invalid_traits');
    return undefined;
  }
  const traits = value as Record<string, unknown>;
  const keys = Object.keys(traits);
  if (keys.length > MAX_TRAITS) {
    addError(errors, 'traits', 'too_many_traits');
    return undefined;
  }
  let valid = true;
  for (const key of keys) {
    // The key itself can be anything a client sent: only a pattern-checked key becomes a path.
    // `__proto__` fits the pattern but would set an object's prototype wherever traits are merged
    // (and a JSON body with it is refused before it gets here): an import's CSV column is refused too.
    if (!TRAIT_KEY_PATTERN.test(key) || key === '__proto__') {
      if (!errors.traits?.includes('invalid_trait_key')) addError(errors, 'traits', 'invalid_trait_key');
      valid = false;
      continue;
    }
    const trait = traits[key];
    const ok =
      trait === null ||
      typeof trait === 'boolean' ||
      (typeof trait === 'number' && Number.isFinite(trait)) ||
      (typeof trait === 'string' && trait.length <= MAX_TRAIT_STRING_LENGTH);
    if (!ok) {
      addError(errors, `traits.${key}`, 'invalid_trait_value');
      valid = false;
    }
  }
  return valid ? (traits as Record<string, TraitValue | null>) : undefined;
}

function readConsent(value: unknown, errors: IdentifierErrors): ConsentWrite {
  const consent: ConsentWrite = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    addError(errors, 'consent', 'invalid_consent');
    return consent;
  }
  for (const [key, given] of Object.entries(value as Record<string, unknown>)) {
    // Own keys only: `constructor` or `toString` is an unknown consent, not what every object inherits.
    const property = Object.hasOwn(CONSENT_FIELDS, key) ? CONSENT_FIELDS[key as keyof typeof CONSENT_FIELDS] : undefined;
    if (property === undefined) addError(errors, 'consent', 'unknown_consent');
    else if (!CONSENT_VALUES.includes(given as ConsentValue)) addError(errors, `consent.${key}`, 'invalid_consent');
    else consent[property] = given as ConsentValue;
  }
  return consent;
}

/**
 * Normalises the write again when the stored person changes how it reads: a phone or postal code
 * named without a country is read in the stored country (SPEC 10.1), and a new country changes the
 * Meta form of the stored postal code (US ZIPs cut to 5 digits), so the stored postal code is
 * hashed again with it. Errors found only now (a national number invalid in the stored country)
 * come back under the same paths.
 */
export function normalizeWith(write: PersonWrite, stored: StoredPerson | undefined): void {
  if (write.identifiers === undefined || stored === undefined) return;
  const identifiers = { ...write.identifiers };
  let again = false;
  if (!write.namesCountryCode && stored.countryCode !== null && ('phone' in identifiers || write.namesPostalCode)) again = true;
  if (write.namesCountryCode && !write.namesPostalCode && stored.postalCode !== null) {
    identifiers.postal_code = stored.postalCode;
    write.namesPostalCode = true;
    write.namedKinds.add('zip');
    again = true;
  }
  if (!again) return;
  // A write that names the country, even as null, is read in its own: the stored one is gone after it.
  const storedCountryCode = write.namesCountryCode ? undefined : (stored.countryCode ?? undefined);
  const normalized = normalizeIdentifiers(identifiers, { storedCountryCode });
  Object.assign(write.errors, normalized.errors);
  write.normalized = normalized;
}

const EMPTY = Buffer.alloc(0);

/** A person's keys and hashes after a write: what `mergedColumns` gives beside the clear columns. */
export type IdentifierColumns = Pick<PersonColumns, 'matchedKeys' | 'googleIdentifiers' | 'metaIdentifiers'>;

/** The person's columns after the write: named fields replaced, traits merged, consent per key, the named kinds' hashes replaced. */
export function mergedColumns(write: PersonWrite, externalId: string, stored: StoredPerson | undefined): PersonColumns {
  const normalized = write.normalized;
  const traits: Record<string, TraitValue> = { ...(stored?.traits ?? {}) };
  for (const [key, value] of Object.entries(write.traits ?? {})) {
    if (value === null) delete traits[key];
    else traits[key] = value;
  }
  const countryCode = write.namesCountryCode ? (normalized?.countryCode ?? null) : (stored?.countryCode ?? null);
  const postalCode = write.namesPostalCode ? (normalized?.postalCode ?? null) : (stored?.postalCode ?? null);
  const mobileAdId = write.namesMobileAdId ? (normalized?.mobileAdId ?? null) : (stored?.mobileAdId ?? null);
  return {
    externalId,
    traits,
    consentAdUserData: write.consent.adUserData ?? stored?.consentAdUserData ?? 'unspecified',
    consentAdPersonalization: write.consent.adPersonalization ?? stored?.consentAdPersonalization ?? 'unspecified',
    countryCode,
    postalCode,
    mobileAdId,
    ...identifierColumns(write, stored, { countryCode, postalCode, mobileAdId }),
  };
}

/**
 * The keys and packed hashes after the write, given the merged clear columns: the stored hashes of
 * the kinds the write does not name and the write's own; matched keys from the merged Google kinds.
 * An import row is read as a new person's (no stored row; the merge works out a stored one's in SQL).
 */
export function identifierColumns(
  write: PersonWrite,
  stored: StoredPerson | undefined,
  clear: Pick<PersonColumns, 'countryCode' | 'postalCode' | 'mobileAdId'>,
): IdentifierColumns {
  const storedGoogleKinds = stored === undefined ? undefined : kindsOf(stored.googleIdentifiers);
  const has = (kind: IdentifierKind, now: boolean) => (write.namedKinds.has(kind) ? now : (storedGoogleKinds?.has(kind) ?? false));
  const google = write.normalized?.google;
  const hashes = hashesOf(write);
  const merged = (platform: IdentifierPlatform, storedHashes: Buffer | undefined) =>
    mergeIdentifiers(
      storedHashes ?? EMPTY,
      write.namedKinds,
      hashes.filter((hash) => hash.platform === platform),
    );
  return {
    matchedKeys: matchedKeysOf({
      email: has('email', (google?.emails.length ?? 0) > 0),
      phone: has('phone', (google?.phones.length ?? 0) > 0),
      firstName: has('first_name', google?.firstName !== undefined),
      lastName: has('last_name', google?.lastName !== undefined),
      countryCode: clear.countryCode !== null,
      postalCode: clear.postalCode !== null,
      mobileAdId: clear.mobileAdId !== null,
    }),
    googleIdentifiers: merged('google', stored?.googleIdentifiers),
    metaIdentifiers: merged('meta', stored?.metaIdentifiers),
  };
}

/** The hashes a write stores, restricted to the kinds it names (the rest of the person's stay). */
export function hashesOf(write: PersonWrite): IdentifierHash[] {
  const normalized = write.normalized;
  if (normalized === undefined) return [];
  const hashes: IdentifierHash[] = [];
  const add = (platform: IdentifierPlatform, kind: IdentifierKind, hash: Buffer | undefined) => {
    if (hash !== undefined && write.namedKinds.has(kind)) hashes.push({ platform, kind, hash });
  };
  const { google, meta } = normalized;
  for (const hash of google.emails) add('google', 'email', hash);
  for (const hash of google.phones) add('google', 'phone', hash);
  add('google', 'first_name', google.firstName);
  add('google', 'last_name', google.lastName);
  for (const hash of meta.emails) add('meta', 'email', hash);
  for (const hash of meta.phones) add('meta', 'phone', hash);
  add('meta', 'first_name', meta.firstName);
  add('meta', 'last_name', meta.lastName);
  add('meta', 'country', meta.country);
  add('meta', 'zip', meta.zip);
  return hashes;
}

/** The merged traits' key count, checked once the stored traits are known (SPEC 10.1: ≤ 100 keys). */
export function tooManyTraits(columns: PersonColumns): boolean {
  return Object.keys(columns.traits).length > MAX_TRAITS;
}

/** A batch row refused, by its index in the request, with its error codes. */
export interface RejectedRow {
  index: number;
  errors: Record<string, string[]>;
}

/**
 * A batch's rows read (SPEC 10.1), before the database: each row checked and normalised on its
 * own; a row with errors, or with an external_id an earlier row of the batch has, is rejected.
 * `externalIds` are the accepted rows' ones, for reading the stored people under lock.
 */
export interface BatchReading {
  accepted: { index: number; write: PersonWrite; externalId: string }[];
  rejected: RejectedRow[];
  externalIds: string[];
}

export function readBatch(rows: unknown[]): BatchReading {
  const rejected: RejectedRow[] = [];
  const accepted: BatchReading['accepted'] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const write = readPersonWrite(row);
    const externalId = write.externalId;
    if (Object.keys(write.errors).length > 0 || externalId === undefined) {
      rejected.push({ index, errors: write.errors });
    } else if (seen.has(externalId)) {
      rejected.push({ index, errors: { external_id: ['duplicate_external_id'] } });
    } else {
      seen.add(externalId);
      accepted.push({ index, write, externalId });
    }
  });
  return { accepted, rejected, externalIds: [...seen] };
}

/**
 * The accepted rows merged with the stored people read under lock: the columns to write, by row
 * index. A row whose merged traits pass the limit joins `reading.rejected`.
 */
export function mergeBatch(reading: BatchReading, stored: Map<string, StoredPerson>): { index: number; columns: PersonColumns }[] {
  const applied: { index: number; columns: PersonColumns }[] = [];
  for (const { index, write, externalId } of reading.accepted) {
    const person = stored.get(externalId);
    normalizeWith(write, person);
    const columns = mergedColumns(write, externalId, person);
    if (tooManyTraits(columns)) write.errors.traits = ['too_many_traits'];
    if (Object.keys(write.errors).length > 0) reading.rejected.push({ index, errors: write.errors });
    else applied.push({ index, columns });
  }
  return applied;
}
