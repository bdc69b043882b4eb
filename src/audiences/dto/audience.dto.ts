import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import {
  ChoiceField,
  ID_SCHEMA,
  JsonObjectField,
  NumberField,
  ReadOnlyField,
  ReferenceField,
  ReferenceListField,
  RequiredString,
  TextField,
} from '../../common/validation/fields.js';
import { AUDIENCE_STATUSES, SOURCE_TYPES } from '../audience.entity.js';

/** Read-only fields a client may echo back in a body: accepted and ignored (SPEC section 3). */
class AudienceReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() size?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
}

export class CreateAudienceDto extends AudienceReadOnlyFields {
  @RequiredString({ max: 255, example: 'High-value churn risks', description: 'Trimmed; unique in the workspace ignoring letter case.' })
  name: string;

  @TextField({ max: 2000, optional: true, example: 'Customers with a churn score above 0.8.' })
  description?: string;

  @ChoiceField(SOURCE_TYPES, { example: 'model', description: 'Where members come from: rules, a model, or an upload.' })
  source_type: (typeof SOURCE_TYPES)[number];

  @JsonObjectField({ example: { country: 'DE', min_orders: 3 } })
  rules?: Record<string, unknown>;

  @ReferenceField({ example: 12, description: 'An AI model instance of your workspace; required when source_type is `model`.' })
  model_instance?: number | null;

  @NumberField({
    min: 0,
    max: 1,
    nullable: true,
    optional: true,
    default: null,
    example: 0.8,
    description: 'Score threshold, 0–1; only with source_type `model`.',
  })
  min_score?: number | null;

  @ReferenceListField({ example: [3], description: 'Destination connections of your workspace.' })
  connections?: number[];

  @ChoiceField(AUDIENCE_STATUSES, {
    optional: true,
    default: 'draft',
    example: 'active',
    description: '`draft` → `active`; `draft`/`active` → `archived`. Archived is final: the audience cannot change any more.',
  })
  status?: (typeof AUDIENCE_STATUSES)[number];
}

/** Every field optional; an explicit null is still checked (so `"name": null` is a 400, not a crash). */
export class UpdateAudienceDto extends PartialType(CreateAudienceDto, { skipNullProperties: false }) {}

/** The response: the swagger plugin reads types, `| null` and presence; the decorators add what TypeScript cannot say. */
export class AudienceDto {
  @ApiProperty({ ...ID_SCHEMA, example: 41, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ example: 'High-value churn risks' })
  name: string;

  @ApiProperty({ example: 'Customers with a churn score above 0.8.' })
  description: string;

  @ApiProperty({ enum: SOURCE_TYPES, example: 'model' })
  source_type: string;

  @ApiProperty({ example: {} })
  rules: Record<string, unknown>;

  @ApiProperty({ ...ID_SCHEMA, example: 12 })
  model_instance: number | null;

  @ApiProperty({ example: 0.8 })
  min_score: number | null;

  @ApiProperty({ type: 'array', items: { ...ID_SCHEMA }, maxItems: 100, uniqueItems: true, example: [3] })
  connections: number[];

  @ApiProperty({ enum: AUDIENCE_STATUSES, example: 'draft' })
  status: string;

  // A PostgreSQL integer column.
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 2147483647, readOnly: true, example: 15230, description: 'Estimated member count.' })
  size: number | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}
