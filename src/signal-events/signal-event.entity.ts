import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, type Relation, Unique } from 'typeorm';
import { Signal } from '../signals/signal.entity.js';

export const SIGNAL_EVENT_STATUSES = ['pending', 'delivered', 'failed', 'held', 'expired'] as const;
export type SignalEventStatus = (typeof SIGNAL_EVENT_STATUSES)[number];

/**
 * One event of a signal (SPEC 10.4), from its acceptance to its delivery. Identifiers are kept only
 * as hashes, per platform, packed (src/signal-events/packed-user-data.ts); the click and browser
 * ids, IP address, user agent and page are kept as given because the platforms take them so.
 * Unique per (signal, event_id) within the workspace: the deduplication of SPEC 10.4 is this index.
 */
@Entity({ name: 'signal_events' })
@Unique('signal_events_customer_signal_event_key', ['customerId', 'signalId', 'eventId'])
@Check('signal_events_status_check', `"status" IN ('pending', 'delivered', 'failed', 'held', 'expired')`)
@Index('signal_events_customer_signal_status_idx', ['customerId', 'signalId', 'status', 'id'])
@Index('signal_events_received_at_idx', ['receivedAt'])
export class SignalEvent {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ name: 'signal_id', type: 'bigint' })
  signalId: number;

  @ManyToOne(() => Signal, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'signal_events_signal_fkey' },
    { name: 'signal_id', referencedColumnName: 'id', foreignKeyConstraintName: 'signal_events_signal_fkey' },
  ])
  signal?: Relation<Signal>;

  @Column({ name: 'event_id', type: 'varchar', length: 255 })
  eventId: string;

  @Column({ name: 'event_time', type: 'timestamptz' })
  eventTime: Date;

  @Column({ type: 'double precision', nullable: true })
  value: number | null;

  @Column({ type: 'varchar', length: 3, nullable: true })
  currency: string | null;

  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  @Column({ name: 'google_user_data', type: 'bytea', nullable: true })
  googleUserData: Buffer | null;

  @Column({ name: 'meta_user_data', type: 'bytea', nullable: true })
  metaUserData: Buffer | null;

  @Column({ name: 'country_code', type: 'varchar', length: 2, nullable: true })
  countryCode: string | null;

  @Column({ name: 'postal_code', type: 'varchar', length: 16, nullable: true })
  postalCode: string | null;

  @Column({ name: 'mobile_ad_id', type: 'uuid', nullable: true })
  mobileAdId: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  gclid: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  fbc: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  fbp: string | null;

  @Column({ name: 'client_ip_address', type: 'varchar', length: 45, nullable: true })
  clientIpAddress: string | null;

  @Column({ name: 'client_user_agent', type: 'varchar', length: 1000, nullable: true })
  clientUserAgent: string | null;

  @Column({ name: 'event_source_url', type: 'varchar', length: 2048, nullable: true })
  eventSourceUrl: string | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: SignalEventStatus;

  /** Tries of the platform request that last carried the event (SYNC_MAX_ATTEMPTS). */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** Why the event failed, held or expired: a reason code and the platform's words, never a value it carried. */
  @Column({ type: 'varchar', length: 300, nullable: true })
  error: string | null;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;
}
