export type IdentifierPlatform = 'google' | 'meta';

/** What each platform's hash is of; `country` and `zip` are Meta's (Google takes them in clear, on `people`). */
export type IdentifierKind = keyof typeof IDENTIFIER_KIND_CODES;

/**
 * The byte before each hash in a packed value; never renumber one (stored people and sent rows
 * keep them). The database's `person_identifier_kinds` and `merged_person_identifiers` functions
 * (migration 1764400000000) read the same codes.
 */
export const IDENTIFIER_KIND_CODES = { email: 1, phone: 2, first_name: 3, last_name: 4, country: 5, zip: 6 } as const;

const KIND_BY_CODE = new Map<number, IdentifierKind>(
  Object.entries(IDENTIFIER_KIND_CODES).map(([kind, code]) => [code, kind as IdentifierKind]),
);

/** A packed identifier: its kind's byte, then its 32-byte SHA-256. */
export const PACKED_IDENTIFIER_BYTES = 33;

/**
 * The kinds that single a person out, by which a removal matches people (SPEC 10.2): a first
 * name, a country or a postal code is shared by many people and names no one.
 */
export const IDENTIFYING_KINDS: ReadonlySet<IdentifierKind> = new Set(['email', 'phone']);

/** One hash of one identifier, of one platform's normal form. */
export interface IdentifierHash {
  platform: IdentifierPlatform;
  kind: IdentifierKind;
  hash: Buffer;
}

/**
 * A person's hashes for one platform, as stored (`people.google_identifiers`,
 * `people.meta_identifiers`) and as a sync sends and remembers them (`sync_sent_members.identifiers`):
 * each hash as its kind's byte and its 32 bytes, sorted by kind name, then by hash. One value per
 * platform rather than a row per hash: an import of 1M people wrote 10M hash rows, most of its
 * merge (docs/architecture.md, "Imports"), and the sync read them back by grouping per person.
 * The sort makes equal sets equal bytes, which is how a sync tells a changed person.
 */
export function packIdentifiers(hashes: Iterable<{ kind: IdentifierKind; hash: Buffer }>): Buffer {
  const sorted = [...hashes].sort(compareIdentifiers);
  const packed = Buffer.allocUnsafe(sorted.length * PACKED_IDENTIFIER_BYTES);
  let offset = 0;
  for (const { kind, hash } of sorted) {
    packed[offset] = IDENTIFIER_KIND_CODES[kind];
    hash.copy(packed, offset + 1, 0, PACKED_IDENTIFIER_BYTES - 1);
    offset += PACKED_IDENTIFIER_BYTES;
  }
  return packed;
}

/** Kind name first (the order `ORDER BY kind, hash` gave), then the hash's bytes. */
function compareIdentifiers(a: { kind: IdentifierKind; hash: Buffer }, b: { kind: IdentifierKind; hash: Buffer }): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return Buffer.compare(a.hash, b.hash);
}

/** The packed value's hashes, in its order; an unknown kind byte is skipped. */
export function* eachIdentifier(packed: Buffer): Generator<{ kind: IdentifierKind; hash: Buffer }> {
  for (let offset = 0; offset + PACKED_IDENTIFIER_BYTES <= packed.length; offset += PACKED_IDENTIFIER_BYTES) {
    const kind = KIND_BY_CODE.get(packed[offset]!);
    if (kind !== undefined) yield { kind, hash: packed.subarray(offset + 1, offset + PACKED_IDENTIFIER_BYTES) };
  }
}

/** The kinds a packed value holds. */
export function kindsOf(packed: Buffer): Set<IdentifierKind> {
  const kinds = new Set<IdentifierKind>();
  for (const { kind } of eachIdentifier(packed)) kinds.add(kind);
  return kinds;
}

/** The packed value's hashes by kind. */
export function identifiersByKind(packed: Buffer): Record<IdentifierKind, Buffer[]> {
  const result: Record<IdentifierKind, Buffer[]> = { email: [], phone: [], first_name: [], last_name: [], country: [], zip: [] };
  for (const { kind, hash } of eachIdentifier(packed)) result[kind].push(hash);
  return result;
}

/**
 * SPEC 10.1, a write replaces the identifiers it names: the stored hashes of every other kind,
 * and the write's own. The import's merge does the same in SQL (`merged_person_identifiers`).
 */
export function mergeIdentifiers(
  stored: Buffer,
  named: ReadonlySet<IdentifierKind>,
  given: readonly { kind: IdentifierKind; hash: Buffer }[],
): Buffer {
  if (stored.length === 0) return packIdentifiers(given);
  const kept = [...eachIdentifier(stored)].filter(({ kind }) => !named.has(kind));
  return packIdentifiers([...kept, ...given]);
}
