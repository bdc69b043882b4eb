import { Inject, Injectable } from '@nestjs/common';
import { TokenCipher } from '../common/crypto/token-cipher.js';
import { ApiError } from '../common/errors/api-error.js';
import { type Page, pageOf } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { Clock } from '../common/time/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import type { ListWebhookDeliveriesQuery, ListWebhooksQuery } from './dto/list-webhooks.query.js';
import type { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import type { CreatedWebhookDto, CreateWebhookDto, UpdateWebhookDto, WebhookDto, WebhookSecretDto } from './dto/webhook.dto.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { eventBody } from './webhook-events.js';
import { WEBHOOK_TEST_EVENT } from './webhook-event-types.js';
import { toWebhookDeliveryDto, toWebhookDto } from './webhook.mapper.js';
import { newEventId, newWebhookSecret } from './webhook-signing.js';
import { checkWebhookUrl, WebhookUrlRefusedError, type WebhookUrlPolicy } from './webhook-url-guard.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** How long the secret a rotation replaces keeps signing beside the new one (SPEC 10.5). */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** The rules of SPEC 10.5 for webhook endpoints; who may call what is the guard's (`AdminWrites` on the controller). */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly transactions: Transactions,
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly cipher: TokenCipher,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(query: ListWebhooksQuery, url: URL): Promise<Page<WebhookDto>> {
    return pageOf(await this.webhooks.list(query.page), query.page, url, toWebhookDto);
  }

  async get(id: number): Promise<WebhookDto> {
    return toWebhookDto(await this.webhooks.getById(id));
  }

  async listDeliveries(id: number, query: ListWebhookDeliveriesQuery, url: URL): Promise<Page<WebhookDeliveryDto>> {
    await this.webhooks.getById(id);
    return pageOf(await this.deliveries.listForWebhook(id, query.status, query.page), query.page, url, toWebhookDeliveryDto);
  }

  async create(input: CreateWebhookDto): Promise<CreatedWebhookDto> {
    await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    const id = await this.transactions.run((transaction) =>
      this.webhooks.create(
        { url: input.url, description: input.description ?? '', events: [...input.events], secret: this.cipher.encrypt(secret) },
        transaction,
      ),
    );
    return { ...(await this.get(id)), secret };
  }

  /**
   * The fields given; a PATCH that changes nothing leaves `updated_at` alone. Disabling records
   * who did it (`disabled_by_user`); enabling clears the reason and the run of failures, whoever
   * disabled it, so an endpoint the service turned off can be turned back on once it is fixed.
   */
  async update(id: number, input: UpdateWebhookDto): Promise<WebhookDto> {
    if (input.url !== undefined) await this.checkUrl(input.url);
    return this.transactions.run(async (transaction) => {
      const webhook = await this.webhooks.getById(id, { transaction, lock: true });
      let changed = false;
      if (input.url !== undefined && input.url !== webhook.url) {
        webhook.url = input.url;
        changed = true;
      }
      if (input.description !== undefined && input.description !== webhook.description) {
        webhook.description = input.description;
        changed = true;
      }
      if (input.events !== undefined && !sameSet(input.events, webhook.events)) {
        webhook.events = [...input.events];
        changed = true;
      }
      if (input.enabled !== undefined && input.enabled !== webhook.enabled) {
        webhook.enabled = input.enabled;
        webhook.disabledReason = input.enabled ? null : 'disabled_by_user';
        webhook.disabledAt = input.enabled ? null : this.clock.now();
        webhook.failingSince = null;
        changed = true;
      }
      if (!changed) return toWebhookDto(webhook);
      return toWebhookDto(await this.webhooks.save(webhook, transaction));
    });
  }

  async delete(id: number): Promise<void> {
    if (!(await this.webhooks.delete(id))) throw ApiError.notFound();
  }

  /** A new secret, shown once; the one it replaces signs beside it for 24 hours (a second rotation drops the oldest). */
  async rotateSecret(id: number): Promise<WebhookSecretDto> {
    const secret = newWebhookSecret();
    const previousUntil = new Date(this.clock.nowMs() + SECRET_OVERLAP_MS);
    await this.transactions.run(async (transaction) => {
      await this.webhooks.getById(id, { transaction, lock: true });
      await this.webhooks.rotateSecret(id, this.cipher.encrypt(secret), previousUntil, transaction);
    });
    return { secret, rotation_overlap_ends_at: previousUntil.toISOString() };
  }

  /**
   * Queues a `webhook.test` event to this endpoint alone (enabled or not), tried once; its data is
   * the endpoint as the API shows it. Answers the delivery, whose outcome the deliveries list shows.
   */
  async sendTest(id: number): Promise<WebhookDeliveryDto> {
    const deliveryId = await this.transactions.run(async (transaction) => {
      const webhook = await this.webhooks.getById(id, { transaction, lock: true });
      const now = this.clock.now();
      const body = eventBody(WEBHOOK_TEST_EVENT, now, toWebhookDto(webhook));
      const created = await this.deliveries.insertForWebhook(id, newEventId(), WEBHOOK_TEST_EVENT, body, now, transaction);
      await this.jobs.enqueue(transaction, JOBS.webhookDelivery, {
        customerId: this.tenants.current().customerId,
        deliveryId: created,
        attempt: 1,
      });
      return created;
    });
    return toWebhookDeliveryDto(await this.deliveries.getById(deliveryId));
  }

  private get policy(): WebhookUrlPolicy {
    return { production: this.config.nodeEnv === 'production' };
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await checkWebhookUrl(url, this.policy);
    } catch (error) {
      if (error instanceof WebhookUrlRefusedError) throw ApiError.field('url', error.message);
      throw error;
    }
  }
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}
