import { Injectable } from '@nestjs/common';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import { Clock } from '../common/time/clock.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import type { DeliveryEventType, WebhookEventType } from './webhook-event-types.js';
import { newEventId } from './webhook-signing.js';

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-event-types.js';

/** The JSON body of every delivery (SPEC 10.5). */
export function eventBody(type: DeliveryEventType, at: Date, data: object): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data });
}

/**
 * How a feature tells integrators that something happened (SPEC 10.5). `emit` runs inside the
 * caller's transaction, in the workspace of the tenant context: the deliveries (one per enabled
 * endpoint subscribed to the type, written by one INSERT … SELECT) and their jobs commit or roll
 * back with the change they report, so no endpoint hears of a change that did not happen.
 * `data` is the object as the API shows it (the mapper's DTO), never an entity.
 */
@Injectable()
export class WebhookEvents {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly clock: Clock,
  ) {}

  async emit(transaction: Transaction, type: WebhookEventType, data: object): Promise<void> {
    const now = this.clock.now();
    const ids = await this.deliveries.insertForEvent(newEventId(), type, eventBody(type, now, data), now, transaction);
    const customerId = this.tenants.current().customerId;
    await this.jobs.enqueueMany(
      transaction,
      JOBS.webhookDelivery,
      ids.map((deliveryId) => ({ customerId, deliveryId, attempt: 1 })),
    );
  }
}
