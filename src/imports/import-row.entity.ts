import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Import } from './import.entity.js';

/**
 * One accepted row of an import, staged until the merge job applies it (SPEC 10.1). Only what
 * may be stored is here: hashes, the country and postal code and mobile ad id in clear, traits
 * and consent. The raw email, phone and names never reach PostgreSQL, not even this table: each
 * row is normalised and hashed in the API process as it arrives (import-row-reader.ts).
 * Rows are keyed by (customer_id, import_id, line); the merge deletes them, and the import's
 * deletion cascades to any it left.
 */
@Entity({ name: 'import_rows' })
export class ImportRow {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'import_id', type: 'bigint' })
  importId: number;

  @PrimaryColumn({ type: 'bigint' })
  line: number;

  @Column({ name: 'external_id', type: 'varchar', length: 255 })
  externalId: string;

  /** Keys to set; a key the row removes (an NDJSON `null`) is in `removed_traits`. */
  @Column({ type: 'jsonb' })
  traits: Record<string, string | number | boolean>;

  @Column({ name: 'removed_traits', type: 'text', array: true })
  removedTraits: string[];

  /** Null when the row does not name it: the stored consent stays. */
  @Column({ name: 'consent_ad_user_data', type: 'varchar', length: 16, nullable: true })
  consentAdUserData: string | null;

  @Column({ name: 'consent_ad_personalization', type: 'varchar', length: 16, nullable: true })
  consentAdPersonalization: string | null;

  @Column({ name: 'country_code', type: 'varchar', length: 2, nullable: true })
  countryCode: string | null;

  @Column({ name: 'postal_code', type: 'varchar', length: 16, nullable: true })
  postalCode: string | null;

  @Column({ name: 'mobile_ad_id', type: 'uuid', nullable: true })
  mobileAdId: string | null;

  /**
   * The identifier kinds the row names: their stored hashes are replaced (SPEC 10.1). Also
   * `mobile_ad_id` when the row names it, so a named `null` removes the stored one.
   */
  @Column({ name: 'named_kinds', type: 'text', array: true })
  namedKinds: string[];

  /** The row's hashes of the kinds it names, packed per platform as `people` keeps them (person-identifiers.ts). */
  @Column({ name: 'google_identifiers', type: 'bytea' })
  googleIdentifiers: Buffer;

  @Column({ name: 'meta_identifiers', type: 'bytea' })
  metaIdentifiers: Buffer;

  /** The row's keys as a new person's (`matchedKeysOf`); a stored person's are merged in SQL. */
  @Column({ name: 'matched_keys', type: 'text', array: true })
  matchedKeys: string[];

  @ManyToOne(() => Import, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'import_rows_import_fkey' },
    { name: 'import_id', referencedColumnName: 'id', foreignKeyConstraintName: 'import_rows_import_fkey' },
  ])
  import?: Relation<Import>;
}
