import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PagedQuery } from '../../common/pagination/list-query.js';
import { BulkRowsField } from '../../common/validation/bulk-rows.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/validation/fields.js';
import { ChoiceFilter } from '../../common/validation/query-fields.js';
import { IdentifiersDto } from '../../people/dto/person.dto.js';
import { SIGNAL_EVENT_STATUSES, type SignalEventStatus } from '../signal-event.entity.js';
import { MAX_EVENTS_PER_REQUEST } from '../signal-event-input.js';

/** One event as a client sends it (SPEC 10.4); the service reads each one by itself, so a bad event rejects that event only. */
export class SignalEventWriteDto {
  @ApiProperty({
    type: 'string',
    minLength: 1,
    maxLength: 255,
    example: 'order-10045',
    description: 'Your id of the event, unique per signal for 30 days: a repeat is counted in `duplicates` and not sent again.',
  })
  event_id: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    example: '2026-11-21T09:58:00.000Z',
    description:
      'When it happened, ISO 8601 with a time zone. At most 7 days old for Meta and 90 for Google (7 without a connection), at most 5 minutes ahead.',
  })
  event_time: string;

  @ApiPropertyOptional({ type: 'number', minimum: 0, example: 49.9, description: 'The conversion value; needs `currency`.' })
  value?: number;

  @ApiPropertyOptional({ type: 'string', pattern: '^[A-Z]{3}$', maxLength: 3, example: 'EUR', description: 'ISO 4217 code of `value`.' })
  currency?: string;

  @ApiPropertyOptional({
    type: 'string',
    minLength: 1,
    maxLength: 255,
    example: 'crm-000123',
    description: 'Your id of the person (sent to Meta hashed).',
  })
  external_id?: string;

  @ApiPropertyOptional({
    type: IdentifiersDto,
    description: 'As for people (SPEC 10.1): normalised and hashed on arrival per platform; the raw values are never stored.',
  })
  identifiers?: IdentifiersDto;

  @ApiPropertyOptional({ type: 'string', maxLength: 255, example: 'Cj0KCQiA…', description: 'Google click id; sent to Google as given.' })
  gclid?: string;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: 255,
    example: 'fb.1.1700000000000.AbCdEf',
    description: 'Meta click id (`_fbc` cookie); sent as given, never hashed.',
  })
  fbc?: string;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: 255,
    example: 'fb.1.1700000000000.1234567890',
    description: 'Meta browser id (`_fbp` cookie); sent as given, never hashed.',
  })
  fbp?: string;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: 45,
    pattern: '^[0-9A-Fa-f.:]+$',
    example: '203.0.113.7',
    description: 'IPv4 or IPv6 address of the person’s device; sent as given, never hashed.',
  })
  client_ip_address?: string;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: 1000,
    example: 'Mozilla/5.0 (X11; Linux x86_64)',
    description: 'The browser’s user agent; required for Meta `website` events.',
  })
  client_user_agent?: string;

  @ApiPropertyOptional({
    type: 'string',
    format: 'uri',
    maxLength: 2048,
    example: 'https://shop.example.com/checkout/done',
    description: 'The page where it happened; required for Meta `website` events.',
  })
  event_source_url?: string;
}

export class SignalEventsBatchDto {
  @BulkRowsField('eventsList', MAX_EVENTS_PER_REQUEST)
  @ApiProperty({
    type: [SignalEventWriteDto],
    maxItems: MAX_EVENTS_PER_REQUEST,
    description: 'Up to 1,000 events.',
    example: [
      {
        event_id: 'order-10045',
        event_time: '2026-11-21T09:58:00.000Z',
        value: 49.9,
        currency: 'EUR',
        identifiers: { email: 'ada@example.com' },
        gclid: 'Cj0KCQiA-example',
      },
    ],
  })
  events: unknown[];
}

export class RejectedEventDto {
  @ApiProperty({
    ...COUNT_SCHEMA,
    maximum: MAX_EVENTS_PER_REQUEST - 1,
    example: 1,
    description: 'The event’s 0-based position in `events`.',
  })
  index: number;

  @ApiProperty({
    type: 'object',
    maxProperties: 32,
    additionalProperties: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
    example: { event_time: ['event_time_too_old'] },
    description:
      'Field path → error codes: `required`, `unknown_field`, `invalid_event`, `invalid_event_id`, `invalid_event_time`, `event_time_too_old`, `event_time_in_future`, ' +
      '`invalid_value`, `invalid_currency`, `currency_required`, `invalid_external_id`, `invalid_gclid`, `invalid_fbc`, `invalid_fbp`, `invalid_client_ip_address`, ' +
      '`invalid_client_user_agent`, `invalid_event_source_url`, `no_match_key`, `required_for_website`, and the identifier codes of people ' +
      '(`invalid_email`, `invalid_phone`, …) under `identifiers.<field>`.',
  })
  errors: Record<string, string[]>;
}

export class EventsAcceptedDto {
  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_EVENTS_PER_REQUEST, example: 2, description: 'New events stored for delivery (or held).' })
  accepted: number;

  @ApiProperty({
    ...COUNT_SCHEMA,
    maximum: MAX_EVENTS_PER_REQUEST,
    example: 1,
    description:
      'Valid events whose `event_id` the signal already had within 30 days, or that repeat one earlier in this request: not stored again.',
  })
  duplicates: number;

  @ApiProperty({
    type: [RejectedEventDto],
    maxItems: MAX_EVENTS_PER_REQUEST,
    description: 'Events not accepted, with why; the others were.',
    example: [{ index: 2, errors: { currency: ['invalid_currency'] } }],
  })
  rejected: RejectedEventDto[];
}

/** An event as listed: its delivery, never its identifiers. */
export class SignalEventDto {
  @ApiProperty({ ...ID_SCHEMA, example: 9001, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 57, readOnly: true, description: 'The signal.' })
  signal: number;

  @ApiProperty({ type: 'string', maxLength: 255, example: 'order-10045' })
  event_id: string;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:58:00.000Z' })
  event_time: string;

  @ApiProperty({ type: 'number', nullable: true, minimum: 0, example: 49.9 })
  value: number | null;

  @ApiProperty({ type: 'string', nullable: true, pattern: '^[A-Z]{3}$', maxLength: 3, example: 'EUR' })
  currency: string | null;

  @ApiProperty({
    enum: SIGNAL_EVENT_STATUSES,
    example: 'delivered',
    description:
      '`pending` (to be sent), `delivered` (the platform accepted it), `failed` (it will not be sent; see `error`), `held` (the signal is paused or failed), `expired` (held longer than 7 days).',
  })
  status: SignalEventStatus;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 100,
    example: 1,
    description: 'Tries of the request that last carried it, when it failed.',
  })
  attempts: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 300,
    example: null,
    description: 'Why it failed or last went wrong: a reason code, a colon and the platform’s words.',
  })
  error: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T10:00:00.000Z', readOnly: true })
  received_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-21T10:00:02.000Z', readOnly: true })
  delivered_at: string | null;
}

/** `GET /api/v1/signals/{id}/events/` (SPEC 10.4). */
export class ListSignalEventsQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'event_time', 'received_at'] as const;

  @ChoiceFilter(SIGNAL_EVENT_STATUSES, { description: 'Only events in this delivery state.' })
  status?: SignalEventStatus;
}
