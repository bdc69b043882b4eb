import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { TokenCipher } from '../common/crypto/token-cipher.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { Clock } from '../common/time/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { JOBS } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';
import { Metrics } from '../metrics/metrics.js';
import { type AttemptRecord, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WEBHOOK_TEST_EVENT } from './webhook-event-types.js';
import { sendDelivery } from './webhook-sender.js';
import { signDelivery } from './webhook-signing.js';
import { deliveryTenant } from './webhook-tenant.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** SPEC 10.5: a delivery is retried for this long after its event, and an endpoint failing this long is disabled. */
export const RETRY_WINDOW_MS = 24 * 3600 * 1000;
/** The longest wait between two tries, so the doubling does not leave the last hours of the window without one. */
const MAX_RETRY_DELAY_MS = 4 * 3600 * 1000;

/**
 * When the try after `attempt` runs: the base doubled per try, capped, with up to a tenth more at
 * random so endpoints that failed together are not all retried together (the specification's
 * advice), never sooner than the endpoint's `Retry-After`, and never after the window closes.
 */
export function nextAttemptAt(createdAt: Date, now: Date, attempt: number, baseSeconds: number, retryAfterSeconds = 0): Date {
  const backoff = Math.min(baseSeconds * 1000 * 2 ** Math.min(attempt - 1, 30), MAX_RETRY_DELAY_MS);
  const delay = Math.max(backoff * (1 + Math.random() / 10), retryAfterSeconds * 1000);
  return new Date(Math.min(now.getTime() + delay, createdAt.getTime() + RETRY_WINDOW_MS));
}

/**
 * Runs one try of one delivery (SPEC 10.5): signs the stored body with the endpoint's secrets,
 * POSTs it (webhook-sender.ts: the address checked and pinned, a time limit, no redirects), and
 * records the try on the delivery row. A failed try within the 24-hour window schedules the next
 * one as a continuation job with its own runAt (WEBHOOK_RETRY_BASE_SECONDS, doubling), and the
 * job itself ends successfully: graphile-worker's own backoff is not the one the SPEC asks for.
 * Each job names the try it is for, so a duplicate or late job (a worker that died after the
 * send) finds the row already past it and does nothing.
 */
@Injectable()
export class WebhookDeliveryJob {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly transactions: Transactions,
    private readonly tenants: TenantContext,
    private readonly jobs: Jobs,
    private readonly cipher: TokenCipher,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    // The admin CLI's container has no metrics; it never runs jobs either.
    @Optional() private readonly metrics?: Metrics,
  ) {}

  @JobHandler(JOBS.webhookDelivery)
  async deliverJob(payload: { customerId: number; deliveryId: number; attempt: number }): Promise<void> {
    await this.tenants.run(deliveryTenant(payload.customerId), () => this.deliver(payload.deliveryId, payload.attempt));
  }

  async deliver(deliveryId: number, attempt: number): Promise<void> {
    const delivery = await this.deliveries.findById(deliveryId);
    if (delivery === null || delivery.status !== 'pending' || Number(delivery.attempt) !== attempt - 1) return;
    const webhook = await this.webhooks.findById(Number(delivery.webhookId));
    if (webhook === null) return;
    const isTest = delivery.eventType === WEBHOOK_TEST_EVENT;

    const labels = { event_type: delivery.eventType };
    if (!webhook.enabled && !isTest) {
      // Turned off (by an admin, or after 24 hours of failures) while this delivery waited: nothing is
      // sent, no attempt is counted, and it does not extend the endpoint's run of failures.
      await this.transactions.run(async (transaction) => {
        if ((await this.webhooks.findById(webhook.id, { transaction, lock: true })) === null) return;
        const locked = await this.deliveries.findById(deliveryId, { transaction, lock: true });
        if (locked === null || locked.status !== 'pending' || Number(locked.attempt) !== attempt - 1) return;
        await this.deliveries.recordAttempt(
          deliveryId,
          {
            attempt: attempt - 1,
            status: 'failed',
            responseStatus: locked.responseStatus,
            durationMs: locked.durationMs,
            error: 'The endpoint was disabled before this delivery got through; nothing more is sent.',
            nextAttemptAt: null,
          },
          transaction,
        );
        this.metrics?.webhookDeliveries.inc({ ...labels, outcome: 'failed' });
      });
      return;
    }
    const headers = signDelivery(delivery.eventId, this.clock.now(), delivery.body, await this.signingSecrets(webhook.id));
    const outcome = await sendDelivery(new URL(webhook.url), { ...headers }, delivery.body, {
      timeoutMs: this.config.webhooks.timeoutMs,
      policy: { production: this.config.nodeEnv === 'production' },
    });
    this.metrics?.webhookAttempts.inc({ ...labels, outcome: outcome.succeeded ? 'succeeded' : 'failed' });

    await this.transactions.run(async (transaction) => {
      // The endpoint's row before the delivery's, the order in which deleting an endpoint (its
      // deliveries cascade) and sending a test event take them: no deadlock between them.
      if ((await this.webhooks.findById(webhook.id, { transaction, lock: true })) === null) return;
      const locked = await this.deliveries.findById(deliveryId, { transaction, lock: true });
      if (locked === null || locked.status !== 'pending' || Number(locked.attempt) !== attempt - 1) return;
      const now = this.clock.now();
      const record: AttemptRecord = {
        attempt,
        status: 'succeeded',
        responseStatus: outcome.responseStatus,
        durationMs: outcome.durationMs,
        error: outcome.error,
        nextAttemptAt: null,
      };
      if (outcome.succeeded) {
        await this.webhooks.markReachable(webhook.id, transaction);
        await this.deliveries.recordAttempt(deliveryId, record, transaction);
        this.metrics?.webhookDeliveries.inc({ ...labels, outcome: 'succeeded' });
        return;
      }
      // A test event is tried once, so its result shows at once; it neither starts nor extends a run of failures.
      const disabledNow =
        !isTest &&
        (await this.webhooks.markFailing(webhook.id, now, new Date(now.getTime() - RETRY_WINDOW_MS), 'failing_for_24_hours', transaction));
      if (disabledNow)
        this.logger.warn({ customer: webhook.customerId, webhook_id: webhook.id }, 'webhook endpoint disabled after failing for 24 hours');
      const windowClosed = now.getTime() - new Date(locked.createdAt).getTime() >= RETRY_WINDOW_MS;
      if (isTest || windowClosed || disabledNow) {
        await this.deliveries.recordAttempt(deliveryId, { ...record, status: 'failed' }, transaction);
        this.metrics?.webhookDeliveries.inc({ ...labels, outcome: 'failed' });
        return;
      }
      const next = nextAttemptAt(
        new Date(locked.createdAt),
        now,
        attempt,
        this.config.webhooks.retryBaseSeconds,
        outcome.retryAfterSeconds,
      );
      await this.deliveries.recordAttempt(deliveryId, { ...record, status: 'pending', nextAttemptAt: next }, transaction);
      await this.jobs.enqueue(
        transaction,
        JOBS.webhookDelivery,
        { customerId: this.tenants.current().customerId, deliveryId, attempt: attempt + 1 },
        { runAt: next },
      );
    });
  }

  /** The current secret, and the previous one while its overlap after a rotation lasts. */
  private async signingSecrets(webhookId: number): Promise<string[]> {
    const stored = await this.webhooks.storedSecrets(webhookId);
    if (!stored) return [];
    const secrets = [this.cipher.decrypt(stored.secret)];
    if (stored.previousSecret && stored.previousSecretExpiresAt && stored.previousSecretExpiresAt.getTime() > this.clock.nowMs())
      secrets.push(this.cipher.decrypt(stored.previousSecret));
    return secrets;
  }
}
