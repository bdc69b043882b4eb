import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Signal } from './signal.entity.js';

/**
 * A signal's delivery counts (SPEC 10.4 `delivery`). The counts are kept by statement triggers on
 * `signal_events` (migration 1764310000000), so they move in the same statement as the events
 * themselves and a read is one row by key; the delivery job writes the last delivery and error.
 * Held events count as pending, expired ones as failed.
 */
@Entity({ name: 'signal_deliveries' })
export class SignalDelivery {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'signal_id', type: 'bigint' })
  signalId: number;

  @ManyToOne(() => Signal, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'signal_deliveries_signal_fkey' },
    { name: 'signal_id', referencedColumnName: 'id', foreignKeyConstraintName: 'signal_deliveries_signal_fkey' },
  ])
  signal?: Relation<Signal>;

  @Column({ type: 'bigint', default: 0 })
  received: number;

  @Column({ type: 'bigint', default: 0 })
  pending: number;

  @Column({ type: 'bigint', default: 0 })
  delivered: number;

  @Column({ type: 'bigint', default: 0 })
  failed: number;

  @Column({ name: 'last_delivered_at', type: 'timestamptz', nullable: true })
  lastDeliveredAt: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 300, nullable: true })
  lastError: string | null;

  @Column({ name: 'last_error_at', type: 'timestamptz', nullable: true })
  lastErrorAt: Date | null;

  /** While the platform asked to wait (backoff, `Retry-After`), the next delivery try is not before then. */
  @Column({ name: 'retry_at', type: 'timestamptz', nullable: true })
  retryAt: Date | null;
}
