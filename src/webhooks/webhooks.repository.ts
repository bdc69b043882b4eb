import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { EncryptedToken } from '../common/crypto/token-cipher.js';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import type { WebhookEventType } from './webhook-event-types.js';
import { Webhook, type WebhookDisabledReason } from './webhook.entity.js';

export const WEBHOOK_ORDERING_COLUMNS: OrderingColumns<Webhook> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
  updated_at: DEFAULT_ORDERING_COLUMNS.updated_at,
};

export interface StoredSecrets {
  secret: EncryptedToken;
  previousSecret: EncryptedToken | null;
  previousSecretExpiresAt: Date | null;
}

/** All SQL about webhook endpoints; the secret columns are read only by `storedSecrets`. */
@Injectable()
export class WebhooksRepository extends TenantRepository<Webhook> {
  constructor(@InjectRepository(Webhook) webhooks: Repository<Webhook>, tenants: TenantContext) {
    super(webhooks, tenants, 'webhook');
  }

  list(request: PageRequest): Promise<ListResult<Webhook>> {
    return this.listPage([], request, { columns: WEBHOOK_ORDERING_COLUMNS });
  }

  async create(
    values: { url: string; description: string; events: WebhookEventType[]; secret: EncryptedToken },
    transaction: Transaction,
  ): Promise<number> {
    const { rows } = await this.tenantQuery<{ id: string }>(
      'INSERT INTO webhooks (customer_id, url, description, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [values.url, values.description, values.events, values.secret],
      transaction,
    );
    return Number(rows[0]!.id);
  }

  async storedSecrets(id: number, transaction?: Transaction): Promise<StoredSecrets | undefined> {
    const { rows } = await this.tenantQuery<{ secret: Buffer; previous_secret: Buffer | null; previous_secret_expires_at: Date | null }>(
      'SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE customer_id = $1 AND id = $2',
      [id],
      transaction,
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      secret: row.secret as EncryptedToken,
      previousSecret: row.previous_secret as EncryptedToken | null,
      previousSecretExpiresAt: row.previous_secret_expires_at,
    };
  }

  /** The new secret signs from now on; the one it replaces signs beside it until `previousUntil`. */
  async rotateSecret(id: number, secret: EncryptedToken, previousUntil: Date, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      `UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3, updated_at = now()
       WHERE customer_id = $1 AND id = $2`,
      [id, secret, previousUntil],
      transaction,
    );
  }

  /** A delivery got through: the endpoint is no longer failing. */
  async markReachable(id: number, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      'UPDATE webhooks SET failing_since = NULL WHERE customer_id = $1 AND id = $2 AND failing_since IS NOT NULL',
      [id],
      transaction,
    );
  }

  /**
   * A try failed: the run of failures starts now unless it already had, and an endpoint whose run
   * began at `disableBefore` or earlier is disabled with its reason. Answers whether this disabled it.
   */
  async markFailing(id: number, now: Date, disableBefore: Date, reason: WebhookDisabledReason, transaction: Transaction): Promise<boolean> {
    const { rows } = await this.tenantQuery<{ disabled: boolean }>(
      `UPDATE webhooks SET
         failing_since = coalesce(failing_since, $3),
         enabled = enabled AND coalesce(failing_since, $3) > $4,
         disabled_reason = CASE WHEN enabled AND coalesce(failing_since, $3) <= $4 THEN $5 ELSE disabled_reason END,
         disabled_at = CASE WHEN enabled AND coalesce(failing_since, $3) <= $4 THEN $3 ELSE disabled_at END,
         updated_at = CASE WHEN enabled AND coalesce(failing_since, $3) <= $4 THEN now() ELSE updated_at END
       WHERE customer_id = $1 AND id = $2
       RETURNING NOT enabled AND disabled_at = $3 AS disabled`,
      [id, now, disableBefore, reason],
      transaction,
    );
    return rows[0]?.disabled === true;
  }
}
