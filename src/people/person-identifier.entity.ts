import { Check, Entity, PrimaryColumn } from 'typeorm';

export const IDENTIFIER_PLATFORMS = ['google', 'meta'] as const;
export type IdentifierPlatform = (typeof IDENTIFIER_PLATFORMS)[number];

/** What each platform's hash is of; `country` and `zip` are Meta's (Google takes them in clear, on `people`). */
export const IDENTIFIER_KINDS = ['email', 'phone', 'first_name', 'last_name', 'country', 'zip'] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/**
 * One SHA-256 hash of one person's identifier in one platform's normal form (SPEC 10.1): 32 bytes,
 * never the raw value. One row per (platform, kind, hash) rather than a column per platform and
 * kind, because:
 * - a person has up to 5 emails and 5 phones, and Google and Meta hash some of them differently
 *   (Gmail dots, the phone's `+`), so columns would be arrays, which no index or anti-join reads well;
 * - the sync (SPEC 10.3) diffs what to send against what a destination accepted as a set, per
 *   (audience, destination): with one row per hash the diff is an anti-join on
 *   (person_id, platform, kind, hash) against the sent rows, and a changed email shows up as one
 *   hash to add and one to remove; a Meta row (EMAIL/PHONE/FN/LN/COUNTRY/ZIP, MADID from `people`)
 *   and a Google member (≤ 10 identifiers) are both built by grouping these rows per person;
 * - "a write replaces the identifiers it names" is one DELETE by (person_id, kind) and one INSERT;
 * - erasure is one DELETE by person_id.
 * The key leads with (customer_id, person_id): every read is one person's or one workspace's rows.
 *
 * No foreign key to `people` (migration 1764000000000, issue 27): PostgreSQL checked it once per
 * row, which was most of an import's merge. Every writer inserts only the ids of people it has
 * upserted or locked in the same transaction, and a trigger on `people` deletes the hashes of every
 * person a DELETE removes (erasure, or a customer's cascade), so no row is left without its person
 * (test/people-privacy.e2e-spec.ts checks both).
 */
@Entity({ name: 'person_identifiers' })
@Check('person_identifiers_hash_length_check', `octet_length("hash") = 32`)
@Check('person_identifiers_platform_check', `"platform" IN ('google', 'meta')`)
@Check('person_identifiers_kind_check', `"kind" IN ('email', 'phone', 'first_name', 'last_name', 'country', 'zip')`)
export class PersonIdentifier {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'person_id', type: 'bigint' })
  personId: number;

  @PrimaryColumn({ type: 'varchar', length: 8 })
  platform: IdentifierPlatform;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  kind: IdentifierKind;

  @PrimaryColumn({ type: 'bytea' })
  hash: Buffer;
}
