import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import {
  ChoiceField,
  ID_SCHEMA,
  JsonObjectField,
  ReadOnlyField,
  ReferenceField,
  RequiredString,
  TextField,
} from '../../common/validation/fields.js';
import { SIGNAL_STATUS_CODES, SIGNAL_TYPES, type SignalStatusCode, type SignalType } from '../signal.entity.js';

const STATUS_CODES_DESCRIPTION = '0 draft, 1 active, 2 paused, 3 failed, 4 archived.';

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

  @JsonObjectField({ example: { conversion_action: 'purchase', lookback_days: 30 } })
  config?: Record<string, unknown>;
}

/** Every field optional; an explicit null is still checked (so `"name": null` is a 400, not a crash). */
export class UpdateSignalDto extends PartialType(CreateSignalDto, { skipNullProperties: false }) {}

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

  @ApiProperty({ type: 'integer', enum: SIGNAL_STATUS_CODES, minimum: 0, maximum: 4, example: 1, description: STATUS_CODES_DESCRIPTION })
  status: number;

  @ApiProperty({ ...ID_SCHEMA, example: 12 })
  model_instance: number | null;

  @ApiProperty({ ...ID_SCHEMA, example: 41 })
  audience: number | null;

  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  connection: number | null;

  @ApiProperty({ example: { conversion_action: 'purchase', lookback_days: 30 } })
  config: Record<string, unknown>;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}
