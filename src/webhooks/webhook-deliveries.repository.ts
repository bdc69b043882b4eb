import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import type { DeliveryEventType } from './webhook-event-types.js';
import { type DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity.js';

export const DELIVERY_ORDERING_COLUMNS: OrderingColumns<WebhookDelivery> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
};

/** What one try changed on its delivery row. */
export interface AttemptRecord {
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** All SQL about webhook deliveries. */
@Injectable()
export class WebhookDeliveriesRepository extends TenantRepository<WebhookDelivery> {
  constructor(@InjectRepository(WebhookDelivery) deliveries: Repository<WebhookDelivery>, tenants: TenantContext) {
    super(deliveries, tenants, 'delivery');
  }

  /** Served by the (customer_id, webhook_id, id) index. */
  listForWebhook(webhookId: number, status: DeliveryStatus | undefined, request: PageRequest): Promise<ListResult<WebhookDelivery>> {
    const conditions: ListCondition<WebhookDelivery>[] = [{ property: 'webhookId', operator: '=', value: webhookId }];
    if (status !== undefined) conditions.push({ property: 'status', operator: '=', value: status });
    return this.listPage(conditions, request, { columns: DELIVERY_ORDERING_COLUMNS });
  }

  /**
   * One delivery per enabled endpoint of the workspace subscribed to the event, in one statement;
   * answers their ids (none when no endpoint listens).
   */
  async insertForEvent(eventId: string, type: DeliveryEventType, body: string, now: Date, transaction: Transaction): Promise<number[]> {
    const { rows } = await this.tenantQuery<{ id: string }>(
      `INSERT INTO webhook_deliveries (customer_id, webhook_id, event_id, event_type, body, next_attempt_at)
       SELECT $1, w.id, $2, $3::text, $4, $5 FROM webhooks w
       WHERE w.customer_id = $1 AND w.enabled AND $3::text = ANY (w.events)
       ORDER BY w.id
       RETURNING id`,
      [eventId, type, body, now],
      transaction,
    );
    return rows.map((row) => Number(row.id));
  }

  /** One delivery to one endpoint (the test event), enabled or not. */
  async insertForWebhook(
    webhookId: number,
    eventId: string,
    type: DeliveryEventType,
    body: string,
    now: Date,
    transaction: Transaction,
  ): Promise<number> {
    const { rows } = await this.tenantQuery<{ id: string }>(
      `INSERT INTO webhook_deliveries (customer_id, webhook_id, event_id, event_type, body, next_attempt_at)
       SELECT $1, w.id, $3, $4, $5, $6 FROM webhooks w WHERE w.customer_id = $1 AND w.id = $2
       RETURNING id`,
      [webhookId, eventId, type, body, now],
      transaction,
    );
    return Number(rows[0]!.id);
  }

  async recordAttempt(id: number, record: AttemptRecord, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      `UPDATE webhook_deliveries SET attempt = $3, status = $4, response_status = $5, duration_ms = $6, error = $7,
         next_attempt_at = $8, updated_at = now()
       WHERE customer_id = $1 AND id = $2`,
      [id, record.attempt, record.status, record.responseStatus, record.durationMs, record.error, record.nextAttemptAt],
      transaction,
    );
  }
}
