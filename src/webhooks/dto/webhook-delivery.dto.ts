import { ApiProperty } from '@nestjs/swagger';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/validation/fields.js';
import { DELIVERY_EVENT_TYPES } from '../webhook-event-types.js';
import { DELIVERY_STATUSES } from '../webhook-delivery.entity.js';

/** One event for one endpoint and its attempts so far (SPEC 10.5). */
export class WebhookDeliveryDto {
  @ApiProperty({ ...ID_SCHEMA, example: 918, readOnly: true })
  id: number;

  @ApiProperty({
    enum: DELIVERY_EVENT_TYPES,
    example: 'sync.failed',
    readOnly: true,
    description: 'The event; `webhook.test` is the one `POST /api/v1/webhooks/{id}/test/` sends.',
  })
  event_type: string;

  @ApiProperty({
    pattern: '^msg_[0-9a-f]{32}$',
    minLength: 36,
    maxLength: 36,
    example: 'msg_5f2c1d3e4b6a79808192a3b4c5d6e7f8',
    readOnly: true,
    description: 'The `webhook-id` header: the same on every attempt of the event, so a receiver can drop duplicates by it.',
  })
  event_id: string;

  @ApiProperty({ ...COUNT_SCHEMA, example: 2, readOnly: true, description: 'Attempts made so far (0 before the first).' })
  attempt: number;

  @ApiProperty({
    enum: DELIVERY_STATUSES,
    example: 'pending',
    readOnly: true,
    description:
      '`pending`: not yet delivered, an attempt is due at `next_attempt_at`; `succeeded`: the endpoint answered 2xx in time; ' +
      '`failed`: no attempt succeeded within 24 hours, or the endpoint was disabled or deleted meanwhile.',
  })
  status: string;

  @ApiProperty({
    type: 'integer',
    minimum: 100,
    maximum: 599,
    nullable: true,
    example: 500,
    readOnly: true,
    description: 'The HTTP status of the last attempt; null when it got no answer (refused, timed out) or none was made.',
  })
  response_status: number | null;

  @ApiProperty({
    ...COUNT_SCHEMA,
    nullable: true,
    example: 87,
    readOnly: true,
    description: 'How long the last attempt took, in milliseconds.',
  })
  duration_ms: number | null;

  @ApiProperty({
    type: 'string',
    maxLength: 500,
    nullable: true,
    example: 'The endpoint answered 500; only a 2xx counts as received.',
    readOnly: true,
    description: 'What went wrong with the last attempt, in words; null after a success or before the first attempt.',
  })
  error: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-21T10:01:00.000Z',
    readOnly: true,
    description: 'When the next attempt runs, while `pending`; null once the delivery succeeded or failed.',
  })
  next_attempt_at: string | null;
}
