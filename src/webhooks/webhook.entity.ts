import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import type { EncryptedToken } from '../common/crypto/token-cipher.js';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';
import type { WebhookEventType } from './webhook-event-types.js';

/** Why an endpoint is not enabled: an admin turned it off, or every attempt failed for 24 hours (SPEC 10.5). */
export const WEBHOOK_DISABLED_REASONS = ['disabled_by_user', 'failing_for_24_hours'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/**
 * An endpoint that receives signed events (SPEC 10.5). The signing secret is stored encrypted
 * (TokenCipher), not hashed: signing needs it in clear. After a rotation the previous secret
 * keeps signing beside the new one until `previous_secret_expires_at`.
 */
@Entity({ name: 'webhooks' })
@Check('webhooks_disabled_reason_check', `"disabled_reason" IS NULL OR "disabled_reason" IN ('disabled_by_user', 'failing_for_24_hours')`)
@Index('webhooks_customer_created_at_idx', ['customerId', 'createdAt'])
export class Webhook extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'webhooks_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 2000, default: '' })
  description: string;

  @Column({ type: 'text', array: true })
  events: WebhookEventType[];

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 32, nullable: true })
  disabledReason: WebhookDisabledReason | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  /** When the current run of failed attempts began; null after a success. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @Column({ type: 'bytea', select: false })
  secret?: EncryptedToken;

  @Column({ name: 'previous_secret', type: 'bytea', nullable: true, select: false })
  previousSecret?: EncryptedToken | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;
}
