import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation, Unique } from 'typeorm';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';
import type { MatchedKey } from './normalization/identifier-normalization.js';

export const CONSENT_VALUES = ['granted', 'denied', 'unspecified'] as const;
export type ConsentValue = (typeof CONSENT_VALUES)[number];

/**
 * One of the advertiser's own customers (SPEC 10.1). No raw email, phone or name is a column
 * here or anywhere else: those arrive, are normalised and hashed, and only their hashes are kept,
 * packed on this row (`google_identifiers`, `meta_identifiers`). What stays in clear is what the SPEC keeps in clear: the country and
 * postal code (Google takes them unhashed; alone they identify no one) and the mobile ad id (Meta's
 * MADID, sent unhashed).
 */
@Entity({ name: 'people' })
// The batch upsert's ON CONFLICT target (SPEC 10.1: external_id is unique per workspace).
@Unique('people_customer_external_id_key', ['customerId', 'externalId'])
@Check('people_consent_ad_user_data_check', `"consent_ad_user_data" IN ('granted', 'denied', 'unspecified')`)
@Check('people_consent_ad_personalization_check', `"consent_ad_personalization" IN ('granted', 'denied', 'unspecified')`)
@Check('people_country_code_check', `"country_code" IS NULL OR "country_code" ~ '^[A-Z]{2}$'`)
@Check('people_google_identifiers_check', `octet_length("google_identifiers") % 33 = 0`)
@Check('people_meta_identifiers_check', `octet_length("meta_identifiers") % 33 = 0`)
@Index('people_customer_created_at_idx', ['customerId', 'createdAt'])
@Index('people_customer_updated_at_idx', ['customerId', 'updatedAt'])
export class Person extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'people_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ name: 'external_id', type: 'varchar', length: 255 })
  externalId: string;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  traits: Record<string, string | number | boolean>;

  @Column({ name: 'consent_ad_user_data', type: 'varchar', length: 16, default: 'unspecified' })
  consentAdUserData: ConsentValue;

  @Column({ name: 'consent_ad_personalization', type: 'varchar', length: 16, default: 'unspecified' })
  consentAdPersonalization: ConsentValue;

  /** ISO 3166-1 alpha-2, uppercase, in clear (Google's AddressInfo.regionCode). */
  @Column({ name: 'country_code', type: 'varchar', length: 2, nullable: true })
  countryCode: string | null;

  /** Trimmed, in clear (Google's AddressInfo.postalCode); Meta's hashed ZIP is in meta_identifiers. */
  @Column({ name: 'postal_code', type: 'varchar', length: 16, nullable: true })
  postalCode: string | null;

  /** Lowercase UUID, kept as given: Meta takes MADID unhashed, and Google lists take no ad ids. */
  @Column({ name: 'mobile_ad_id', type: 'uuid', nullable: true })
  mobileAdId: string | null;

  /**
   * Which kinds of key the person has (`email`, `phone`, `address`, `mobile_ad_id`), kept with the
   * row so that lists and details never read the hashes to show them, and the sync can skip the
   * unmatchable with a condition on this row alone.
   */
  @Column({ name: 'matched_keys', type: 'text', array: true, default: () => "'{}'" })
  matchedKeys: MatchedKey[];

  /**
   * The person's hashes in Google's normal forms, packed (person-identifiers.ts `packIdentifiers`:
   * a kind byte and 32 bytes each, sorted). Never selected by default and never in an answer.
   */
  @Column({ name: 'google_identifiers', type: 'bytea', default: () => "'\\x'", select: false })
  googleIdentifiers?: Buffer;

  /** The same in Meta's normal forms, with the hashed country and ZIP. */
  @Column({ name: 'meta_identifiers', type: 'bytea', default: () => "'\\x'", select: false })
  metaIdentifiers?: Buffer;
}
