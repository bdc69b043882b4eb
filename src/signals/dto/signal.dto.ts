import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import {
  COUNT_SCHEMA,
  ChoiceField,
  ID_SCHEMA,
  JsonObjectField,
  ReadOnlyField,
  ReferenceField,
  RequiredString,
  TextField,
} from '../../common/validation/fields.js';
import { type Signal, SIGNAL_STATUS_CODES, SIGNAL_TYPES, SignalStatus, type SignalStatusCode, type SignalType } from '../signal.entity.js';
import { type FieldTable, initialValues } from '../../common/validation/field-table.js';
import type { CreateExample } from '../../openapi/create-examples.js';

const STATUS_CODES_DESCRIPTION = '0 draft, 1 active, 2 paused, 3 failed, 4 archived.';

const CONFIG_DESCRIPTION =
  'The destination settings of the connection’s platform (SPEC 10.4). Google: `{"conversion_action_id": "123456789"}` (digits). ' +
  'Meta: `{"pixel_id": "…", "event_name": "Purchase", "action_source": "website" | "app" | "phone_call" | "chat" | "email" | ' +
  '"physical_store" | "system_generated" | "business_messaging" | "other", "test_event_code": "TEST123"}` (`test_event_code` optional: ' +
  'it sends the events to Meta’s Test Events instead of the ads). Checked when `connection` is set: an unknown key or a wrong type is a 400 ' +
  'under `config.<key>`; a missing required key is allowed in a draft and a 400 on activation.';

/** The status codes' names, for client generators (orval, openapi-generator) to name the enum's members by. */
const STATUS_NAMES = { 'x-enum-varnames': Object.keys(SignalStatus) };

const TRANSITIONS_DESCRIPTION =
  'Transitions: 0→1, 1→2, 2→1, 3→1, and any status but 4 → 4; 4 (archived) is final and the signal cannot change any more. ' +
  'Setting the status a signal already has changes nothing. Activating (→1) needs `connection` to be an active connection of your ' +
  'workspace. 3 (failed) is set by the delivery pipeline, never through the API.';

/** Read-only fields a client may echo back in a body: accepted and ignored (SPEC section 3). */
class SignalReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() status_reason?: unknown;
  @ApiHideProperty() @ReadOnlyField() delivery?: unknown;
}

export class CreateSignalDto extends SignalReadOnlyFields {
  @RequiredString({ max: 255, example: 'Purchase conversions to Google Ads', description: 'Trimmed.' })
  name: string;

  @TextField({ max: 2000, optional: true, example: 'Offline purchases, sent hourly.' })
  description?: string;

  @ChoiceField(SIGNAL_TYPES, {
    example: 'conversion',
    description: 'What the signal carries: conversions, conversion values, or model scores.',
  })
  signal_type: SignalType;

  @ChoiceField(SIGNAL_STATUS_CODES, {
    ...STATUS_NAMES,
    optional: true,
    default: 0,
    example: 0,
    description:
      `${STATUS_CODES_DESCRIPTION} An integer: \`"1"\` (a string) is refused. On create only 0 (the default), 1 (needs an active ` +
      `\`connection\`) and 4 are accepted, as if the signal started as a draft. ${TRANSITIONS_DESCRIPTION}`,
  })
  status?: SignalStatusCode;

  @ReferenceField({ example: 12, description: 'An AI model instance of your workspace whose outputs the signal sends.' })
  model_instance?: number | null;

  @ReferenceField({ example: 41, description: 'An audience of your workspace.' })
  audience?: number | null;

  @ReferenceField({
    example: 3,
    description: 'The destination: a connection of your workspace. Must be active to activate the signal.',
  })
  connection?: number | null;

  @JsonObjectField({ example: { conversion_action_id: '123456789' }, description: CONFIG_DESCRIPTION })
  config?: Record<string, unknown>;
}

/** Every field optional; an explicit null is still checked (so `"name": null` is a 400, not a crash). */
export class UpdateSignalDto extends PartialType(CreateSignalDto, { skipNullProperties: false }) {}

/** A signal's event counts (SPEC 10.4): over the events kept, which are those of the last 30 days. */
export class SignalDeliveryDto {
  @ApiProperty({ ...COUNT_SCHEMA, example: 1200, description: 'Events accepted (duplicates not counted).' })
  received: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 1180, description: 'Events the platform accepted.' })
  delivered: number;

  @ApiProperty({
    ...COUNT_SCHEMA,
    example: 3,
    description:
      'Events that will not be delivered: refused by the platform, out of its time window, or held longer than 7 days (expired).',
  })
  failed: number;

  @ApiProperty({
    ...COUNT_SCHEMA,
    example: 17,
    description: 'Events still to be delivered, including those held while the signal is paused or failed.',
  })
  pending: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-21T10:05:00.000Z' })
  last_delivered_at: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 300,
    example: 'rate_limited: Quota exceeded for quota metric.',
    description: 'The last delivery error: a reason code, a colon and the platform’s words (never a value the events carried).',
  })
  last_error: string | null;
}

/** The response: the swagger plugin reads types, `| null` and presence; the decorators add what TypeScript cannot say. */
export class SignalDto {
  @ApiProperty({ ...ID_SCHEMA, example: 57, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ example: 'Purchase conversions to Google Ads' })
  name: string;

  @ApiProperty({ example: 'Offline purchases, sent hourly.' })
  description: string;

  @ApiProperty({ enum: SIGNAL_TYPES, example: 'conversion' })
  signal_type: string;

  @ApiProperty({
    type: 'integer',
    enum: SIGNAL_STATUS_CODES,
    ...STATUS_NAMES,
    minimum: 0,
    maximum: 4,
    example: 1,
    description: STATUS_CODES_DESCRIPTION,
  })
  status: number;

  @ApiProperty({ ...ID_SCHEMA, example: 12 })
  model_instance: number | null;

  @ApiProperty({ ...ID_SCHEMA, example: 41 })
  audience: number | null;

  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  connection: number | null;

  @ApiProperty({ example: { conversion_action_id: '123456789' }, description: CONFIG_DESCRIPTION })
  config: Record<string, unknown>;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 500,
    readOnly: true,
    example: null,
    description:
      'Why the delivery pipeline turned the signal 3 (failed), e.g. `destination_refused: The conversion action does not exist.`; null otherwise. Cleared when it is active again.',
  })
  status_reason: string | null;

  @ApiProperty({ type: () => SignalDeliveryDto, readOnly: true })
  delivery: SignalDeliveryDto;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}

/**
 * The writable columns of a signal (SPEC section 3).
 * The service creates, merges, compares and assigns by this table, so a new writable field is
 * one property above and one line here (and one in the mapper).
 */
export const SIGNAL_FIELDS = [
  { api: 'name', property: 'name' },
  { api: 'description', property: 'description', initial: '' },
  { api: 'signal_type', property: 'signalType' },
  { api: 'status', property: 'status', initial: SignalStatus.draft },
  { api: 'model_instance', property: 'modelInstanceId', initial: null, nullable: true },
  { api: 'audience', property: 'audienceId', initial: null, nullable: true },
  { api: 'connection', property: 'connectionId', initial: null, nullable: true },
  { api: 'config', property: 'config', initial: {}, json: true },
] as const satisfies FieldTable<Signal>;

/** An example request with the 201 it gets: the request's fields over those of a new signal. */
function withCreated(request: Record<string, unknown>): Pick<CreateExample, 'request' | 'response'> {
  const defaults = initialValues<Signal>(SIGNAL_FIELDS);
  const delivery = { received: 0, delivered: 0, failed: 0, pending: 0, last_delivered_at: null, last_error: null };
  const at = '2026-11-21T10:00:00.000Z';
  return {
    request,
    response: { id: 57, customer: 1, ...defaults, ...request, status_reason: null, delivery, created_at: at, updated_at: at },
  };
}

/**
 * Named examples of `POST /api/v1/signals/` (issue 25, item 15). The first is what Swagger UI's
 * Try-it-out sends: a draft that names no other object, so it works as is in any workspace.
 */
export const CREATE_SIGNAL_EXAMPLES: Record<string, CreateExample> = {
  conversion: {
    summary: 'A draft conversion signal, its destination chosen later (works as is)',
    ...withCreated({
      name: 'Purchase conversions to Google Ads',
      description: 'Offline purchases, sent hourly.',
      signal_type: 'conversion',
      config: { conversion_action_id: '123456789' },
    }),
  },
  score: {
    summary: "A model's scores for one audience, sent to one connection",
    description:
      'Replace `12`, `41` and `3` with ids of your workspace: an AI model instance (`GET /api/v1/ai-model-instances/`), an audience (`GET /api/v1/audiences/`) and a connection (`GET /api/v1/connections/`). It starts as a draft; `PATCH` `status: 1` activates it once the connection is active.',
    ...withCreated({
      name: 'Churn scores of high-value customers',
      description: 'Daily churn scores as conversion values.',
      signal_type: 'score',
      model_instance: 12,
      audience: 41,
      connection: 3,
    }),
  },
};
