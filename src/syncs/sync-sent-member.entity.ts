import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * What one destination last accepted for one person (SPEC 10.3, "Exactly once, never
 * half-recorded"): written per accepted batch, so it is the platform's side as this service knows
 * it, and the sync's diff is an anti-join against it.
 * - `identifiers`: each identifier sent, as one byte of kind (IDENTIFIER_KIND_CODES) and its 32-byte
 *   hash, sorted, so two states compare as one bytea and an erased person's removal still has them;
 * - `region_code`, `postal_code` (Google's address, in clear), `mobile_ad_id` (Meta's MADID) and
 *   `consent` (two letters of g/d/u, Google's per-member consent) as sent;
 * - `person_updated_at`: the person's `updated_at` when read, so the next sync reads identifiers
 *   again only for people written since (a person written while a sync reads keeps a newer one);
 * - `request_id`: the Google request that carried it: when Google's verdict fails the request,
 *   its rows are dropped (a rare scan of the destination's rows, so no index on it), and the next
 *   sync sends them again;
 * - `removal_request_id`: the Google removal request the row waits on (migration 1764330000000): a
 *   removed person's row stays until Google's verdict, which drops it (success) or clears the id
 *   (failure: the next sync removes the person again).
 * No foreign keys: see migration 1764320000000.
 */
@Entity({ name: 'sync_sent_members' })
@Index('sync_sent_members_removal_request_idx', ['customerId', 'audienceId', 'connectionId', 'removalRequestId'], {
  where: `"removal_request_id" IS NOT NULL`,
})
export class SyncSentMember {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'audience_id', type: 'bigint' })
  audienceId: number;

  @PrimaryColumn({ name: 'connection_id', type: 'bigint' })
  connectionId: number;

  @PrimaryColumn({ name: 'person_id', type: 'bigint' })
  personId: number;

  @Column({ type: 'bytea' })
  identifiers: Buffer;

  @Column({ name: 'region_code', type: 'varchar', length: 2, nullable: true })
  regionCode: string | null;

  @Column({ name: 'postal_code', type: 'varchar', length: 16, nullable: true })
  postalCode: string | null;

  @Column({ name: 'mobile_ad_id', type: 'uuid', nullable: true })
  mobileAdId: string | null;

  @Column({ type: 'varchar', length: 2 })
  consent: string;

  @Column({ name: 'person_updated_at', type: 'timestamptz' })
  personUpdatedAt: Date;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId: string | null;

  @Column({ name: 'removal_request_id', type: 'varchar', length: 128, nullable: true })
  removalRequestId: string | null;
}
