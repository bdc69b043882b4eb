import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import type { DeliveryEventType } from './webhook-event-types.js';
import { Webhook } from './webhook.entity.js';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One event for one endpoint (SPEC 10.5), and the record of its attempts: `attempt` counts them,
 * the last one's answer is kept (`response_status`, `duration_ms`, `error`), and while it is
 * `pending` `next_attempt_at` says when the next try runs. `body` is kept as sent, so every try
 * of an event carries the same bytes (and the same `webhook-id`: `event_id`).
 */
@Entity({ name: 'webhook_deliveries' })
@Check('webhook_deliveries_status_check', `"status" IN ('pending', 'succeeded', 'failed')`)
@Index('webhook_deliveries_customer_webhook_idx', ['customerId', 'webhookId', 'id'])
export class WebhookDelivery extends TenantEntity {
  @Column({ name: 'webhook_id', type: 'bigint' })
  webhookId: number;

  @ManyToOne(() => Webhook, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'webhook_deliveries_webhook_fkey' },
    { name: 'webhook_id', referencedColumnName: 'id', foreignKeyConstraintName: 'webhook_deliveries_webhook_fkey' },
  ])
  webhook?: Relation<Webhook>;

  @Column({ name: 'event_id', type: 'varchar', length: 64 })
  eventId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType: DeliveryEventType;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempt: number;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;
}
