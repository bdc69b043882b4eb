import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AdminWrites } from '../common/access/access.decorators.js';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { ListWebhookDeliveriesQuery, ListWebhooksQuery } from './dto/list-webhooks.query.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { CreatedWebhookDto, CreateWebhookDto, UpdateWebhookDto, WebhookDto, WebhookSecretDto } from './dto/webhook.dto.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * SPEC 10.5: endpoints that receive signed events, and what was delivered to them. Anyone in the
 * workspace reads; only admins and write-scope API keys manage (`AdminWrites`, checked by the guard).
 */
@ApiTags('webhooks')
@Controller('api/v1/webhooks')
@AdminWrites()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @ApiOperation({
    summary: 'List webhooks',
    description:
      'The endpoints of your workspace that receive events, newest first by default; never their secrets. Anyone in the ' +
      'workspace may read them; only admins and write-scope API keys manage them.',
  })
  @ApiList(WebhookDto, ListWebhooksQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListWebhooksQuery, @PageLinks() links: URL) {
    return this.webhooks.list(query, links);
  }

  // No Idempotency-Key: a replayed answer would have to keep the secret in clear in idempotency_keys.
  @Post()
  @ApiOperation({
    summary: 'Create a webhook',
    description:
      'Registers an endpoint for the events it lists. Deliveries are POSTs of `{"type", "timestamp", "data"}` signed as Standard ' +
      'Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`; docs/webhooks.md), retried with backoff for 24 hours. ' +
      'The signing `secret` is in this response only. In production the URL must be https and resolve only to public addresses ' +
      '(a refused URL is a 400 under `url`).',
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto, description: 'The new webhook, with its secret (shown this once).' })
  @ApiProblems(400, 413, 415)
  create(@Body() body: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a webhook', description: 'One endpoint of your workspace, without its secret.' })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: WebhookDto, description: 'The webhook.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<WebhookDto> {
    return this.webhooks.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a webhook',
    description:
      'Changes `url`, `events`, `description` or `enabled`. `enabled: false` stops deliveries (`disabled_reason` ' +
      '`disabled_by_user`); `enabled: true` turns an endpoint on again, also one the service disabled after 24 hours of failures. ' +
      'A new URL is checked as on create.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: WebhookDto, description: 'The webhook as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateWebhookDto): Promise<WebhookDto> {
    return this.webhooks.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a webhook',
    description: 'Removes the endpoint and its deliveries; nothing more is sent to it. 204, no body.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(404)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.webhooks.delete(id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: "Rotate a webhook's secret",
    description:
      'Makes a new signing secret, shown in this response only. For 24 hours deliveries carry two signatures in ' +
      '`webhook-signature` (space-separated: the new secret first, then the previous one), so receivers can switch without ' +
      'missing an event; then only the new one signs. Rotating again within the 24 hours drops the oldest secret at once.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: WebhookSecretDto, description: 'The new secret (shown this once) and the end of the overlap.' })
  @ApiProblems(404)
  rotateSecret(@Param('id', IdPipe) id: number): Promise<WebhookSecretDto> {
    return this.webhooks.rotateSecret(id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event to this endpoint alone, enabled or not, signed like every delivery; its `data` is the ' +
      'webhook as `GET` shows it. It is tried once (no retries) and never counts towards disabling the endpoint. The answer is ' +
      'the delivery, `pending`; its outcome appears in the deliveries list moments later.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiAcceptedResponse({ type: WebhookDeliveryDto, description: 'The queued delivery.' })
  @ApiProblems(404)
  sendTest(@Param('id', IdPipe) id: number): Promise<WebhookDeliveryDto> {
    return this.webhooks.sendTest(id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: "List a webhook's deliveries",
    description:
      'What was sent to this endpoint, newest first by default: one item per event, with its attempts so far (`attempt`), ' +
      "the last attempt's `response_status`, `duration_ms` and `error`, and while `pending` when the next attempt runs.",
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiList(WebhookDeliveryDto, ListWebhookDeliveriesQuery)
  @ApiProblems(400, 404)
  listDeliveries(@Param('id', IdPipe) id: number, @ListQuery() query: ListWebhookDeliveriesQuery, @PageLinks() links: URL) {
    return this.webhooks.listDeliveries(id, query, links);
  }
}
