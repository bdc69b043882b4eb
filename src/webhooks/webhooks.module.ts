import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TokenCipher } from '../common/crypto/token-cipher.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveryJob } from './webhook-delivery.job.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEvents } from './webhook-events.js';
import { Webhook } from './webhook.entity.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Signed webhooks (SPEC 10.5), without HTTP routes: the event emitter, the delivery job and their
 * tables. Features that report events import this module and call `WebhookEvents.emit` in their
 * own transaction; it imports no feature back. The admin CLI loads it through them, with no
 * request pipeline (idempotency) for a controller to need.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Webhook, WebhookDelivery])],
  providers: [
    WebhooksRepository,
    WebhookDeliveriesRepository,
    WebhookEvents,
    WebhookDeliveryJob,
    { provide: TokenCipher, useFactory: (config: AppConfig) => TokenCipher.fromConfig(config), inject: [APP_CONFIG] },
  ],
  exports: [WebhookEvents, WebhooksRepository, WebhookDeliveriesRepository, TokenCipher],
})
export class WebhooksModule {}

/** `/api/v1/webhooks/`: the REST resource over WebhooksModule, for the HTTP application only. */
@Module({
  imports: [WebhooksModule],
  controllers: [WebhooksController],
  providers: [WebhooksService],
})
export class WebhooksApiModule {}
