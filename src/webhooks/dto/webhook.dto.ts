import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import { applyDecorators } from '@nestjs/common';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { BooleanField, ID_SCHEMA, MESSAGES, ReadOnlyField, RequiredString, TextField } from '../../common/validation/fields.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhook-event-types.js';
import { WEBHOOK_DISABLED_REASONS } from '../webhook.entity.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../webhook-url-guard.js';

const EVENTS_DESCRIPTION =
  'The events this endpoint receives, at least one, each once: `sync.succeeded`, `sync.failed` (an audience sync run ended), ' +
  '`connection.reauthorization_required` (a connection lost its grant or lacks a permission and must be connected again), ' +
  '`signal.failed` (a signal turned failed), `import.finished` (an import succeeded or failed).';

const URL_DESCRIPTION =
  'Where deliveries are POSTed. In production it must be https and its host must resolve only to public addresses ' +
  '(not loopback, private, carrier-grade NAT, link-local, metadata, unique-local, multicast or unspecified), which is checked ' +
  'here and again before each delivery; outside production http (e.g. to localhost) is allowed. No user name, password or fragment.';

/** A non-empty list of distinct event names. */
function EventsField({ optional = false }: { optional?: boolean } = {}) {
  const messageFor = (value: unknown): string | undefined => {
    if (value === undefined) return optional ? undefined : MESSAGES.required;
    if (value === null) return MESSAGES.notNull;
    if (!Array.isArray(value)) return MESSAGES.notList;
    if (value.length === 0) return 'This list may not be empty.';
    const unknown = value.find((name) => !WEBHOOK_EVENT_TYPES.includes(name as WebhookEventType));
    if (unknown !== undefined) return MESSAGES.choice(typeof unknown === 'string' ? unknown : JSON.stringify(unknown), WEBHOOK_EVENT_TYPES);
    if (new Set(value).size !== value.length) return 'Each event may be listed once.';
    return undefined;
  };
  return applyDecorators(
    ApiProperty({
      type: 'array',
      items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
      required: !optional,
      example: ['sync.failed', 'connection.reauthorization_required'],
      description: EVENTS_DESCRIPTION,
    }),
    ValidateBy({
      name: 'events',
      validator: {
        validate: (value: unknown) => messageFor(value) === undefined,
        defaultMessage: (args?: ValidationArguments) => messageFor(args?.value) ?? '',
      },
    }),
  );
}

/** Read-only fields a client may echo back in a body: accepted and ignored (SPEC section 3). */
class WebhookReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() disabled_reason?: unknown;
  @ApiHideProperty() @ReadOnlyField() disabled_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() failing_since?: unknown;
  @ApiHideProperty() @ReadOnlyField() rotation_overlap_ends_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
}

export class CreateWebhookDto extends WebhookReadOnlyFields {
  @RequiredString({
    max: MAX_WEBHOOK_URL_LENGTH,
    format: 'uri',
    example: 'https://hooks.example.com/audience-platform',
    description: URL_DESCRIPTION,
  })
  url: string;

  @EventsField()
  events: WebhookEventType[];

  @TextField({ max: 2000, optional: true, example: 'Alerts to the integration team' })
  description?: string;
}

class WebhookEditableFields extends CreateWebhookDto {
  @BooleanField({
    example: true,
    description:
      'Whether events are delivered. `false` stops deliveries (`disabled_reason` `disabled_by_user`); `true` enables it again ' +
      'and clears `disabled_reason`, also after the service disabled a failing endpoint.',
  })
  enabled: boolean;
}

/** Every field optional; an explicit null is still checked (so `"events": null` is a 400). */
export class UpdateWebhookDto extends PartialType(WebhookEditableFields, { skipNullProperties: false }) {}

/** The response: the secret never appears here; it is shown once, by `CreatedWebhookDto` and `WebhookSecretDto`. */
export class WebhookDto {
  @ApiProperty({ ...ID_SCHEMA, example: 4, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ maxLength: MAX_WEBHOOK_URL_LENGTH, format: 'uri', example: 'https://hooks.example.com/audience-platform' })
  url: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPES.length,
    uniqueItems: true,
    example: ['sync.failed', 'connection.reauthorization_required'],
  })
  events: string[];

  @ApiProperty({ maxLength: 2000, example: 'Alerts to the integration team' })
  description: string;

  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    enum: [...WEBHOOK_DISABLED_REASONS, null],
    readOnly: true,
    example: null,
    description:
      'Why `enabled` is false: `disabled_by_user` (an admin turned it off), or `failing_for_24_hours` (every delivery attempt ' +
      'failed for 24 hours, so the service stopped sending; fix the endpoint, then PATCH `enabled: true`). Null while enabled.',
  })
  disabled_reason: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: null })
  disabled_at: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    readOnly: true,
    example: null,
    description: 'Since when every attempt has failed; null after a delivery got through. At 24 hours the endpoint is disabled.',
  })
  failing_since: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    readOnly: true,
    example: null,
    description: 'After a secret rotation: until when the previous secret still signs deliveries beside the new one.',
  })
  rotation_overlap_ends_at: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}

const SECRET_SCHEMA = {
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  minLength: 50,
  maxLength: 50,
  readOnly: true,
  example: 'whsec_YW4gZXhhbXBsZSBrZXksIG5ldmVyIGEgcmVhbCBvbmU=',
};

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    ...SECRET_SCHEMA,
    description:
      'The signing secret (Standard Webhooks: `whsec_` and 32 bytes in base64), shown only in this response. Keep it to verify ' +
      '`webhook-signature` (docs/webhooks.md); if it is lost, rotate it.',
  })
  secret: string;
}

export class WebhookSecretDto {
  @ApiProperty({
    ...SECRET_SCHEMA,
    description: 'The new signing secret, shown only in this response. The previous one keeps signing beside it for 24 hours.',
  })
  secret: string;

  @ApiProperty({
    format: 'date-time',
    readOnly: true,
    example: '2026-11-22T10:00:00.000Z',
    description: 'Until when deliveries also carry a signature made with the previous secret.',
  })
  rotation_overlap_ends_at: string;
}
