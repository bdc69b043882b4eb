import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import {
  ChoiceField,
  ID_SCHEMA,
  JsonObjectField,
  NumberField,
  ReadOnlyField,
  OnlyWhen,
  ReferenceField,
  RequiredWhen,
  ReferenceListField,
  RequiredString,
  TextField,
} from '../../common/validation/fields.js';
import { type Audience, AUDIENCE_STATUSES, SOURCE_TYPES } from '../audience.entity.js';
import { type FieldTable, initialValues } from '../../common/validation/field-table.js';
import { rulesErrors } from '../rules/audience-rules.js';

/** A rules tree as the API document shows it. */
const RULES_EXAMPLE = {
  all: [
    { trait: 'plan', op: 'eq', value: 'pro' },
    { trait: 'ltv', op: 'gte', value: 100 },
    { consent: 'ad_personalization', op: 'eq', value: 'granted' },
  ],
};
import type { CreateExample } from '../../openapi/create-examples.js';

/** The cross-field rules of SPEC section 3, checked with the body's other fields and again by the service on the merged object. */
export const MODEL_INSTANCE_REQUIRED = 'This field is required when source_type is "model".';
export const MIN_SCORE_ONLY_FOR_MODEL = 'Only allowed when source_type is "model".';

/** Read-only fields a client may echo back in a body: accepted and ignored (SPEC section 3). */
class AudienceReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() size?: unknown;
  @ApiHideProperty() @ReadOnlyField() members_updated_at?: unknown;
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

  @JsonObjectField({
    grammar: rulesErrors,
    example: RULES_EXAMPLE,
    description:
      'Who a rules audience selects (SPEC 10.2): `{"all": [...]}`, `{"any": [...]}`, `{"not": {...}}`, a trait condition `{"trait", "op", "value"}` (ops eq, neq, gt, gte, lt, lte, in, not_in (≤ 1,000 values), contains, exists, not_exists) or a consent condition `{"consent": "ad_user_data" | "ad_personalization", "op": eq | neq | in | not_in, "value"}`. `{}` selects nobody. Comparisons are typed: a number matches numbers only; a missing trait matches only `not_exists`. Errors come under `rules.<path>`, e.g. `rules.all.2.op`.',
  })
  rules?: Record<string, unknown>;

  @ReferenceField({ example: 12, description: 'An AI model instance of your workspace; required when source_type is `model`.' })
  @RequiredWhen('source_type', 'model', MODEL_INSTANCE_REQUIRED)
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
  @OnlyWhen('source_type', 'model', MIN_SCORE_ONLY_FOR_MODEL)
  min_score?: number | null;

  @ReferenceListField({ example: [3], description: 'Destination connections of your workspace.' })
  connections?: number[];

  @ChoiceField(AUDIENCE_STATUSES, {
    optional: true,
    default: 'draft',
    example: 'draft',
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

  @ApiProperty({ type: 'object', additionalProperties: true, example: RULES_EXAMPLE })
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
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2147483647,
    readOnly: true,
    example: 15230,
    description: 'The exact member count as of `members_updated_at`; null before the first computation (SPEC 10.2).',
  })
  size: number | null;

  @ApiProperty({
    example: '2026-11-21T10:05:00.000Z',
    format: 'date-time',
    readOnly: true,
    description: 'When the members were last computed; null before the first computation.',
  })
  members_updated_at: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}

/** One destination of an audience and what its syncs left (SPEC 10.3); read-only. */
export class AudienceDestinationDto {
  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  connection: number;

  @ApiProperty({ type: 'string', enum: ['google_ads', 'meta_ads'], example: 'google_ads' })
  platform: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 64,
    pattern: '^[0-9]{1,64}$',
    example: '8123456789',
    description: 'The list on the platform (a Google user list id, a Meta custom audience id); null until the first sync creates it.',
  })
  platform_audience_id: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 64,
    pattern: '^[a-z_]{1,64}$',
    example: null,
    description:
      "Why the destination cannot sync as it is, or null: `audience_flagged` (Meta flagged the audience), `scope_missing` (a Google grant without the Data Manager scope: reconnect), `terms_not_accepted` (an admin must accept the Customer Match terms on the Google connection), or the connection's own reason when it is `expired` or `revoked`.",
  })
  status_reason: string | null;

  @ApiProperty({
    type: 'object',
    properties: {
      id: { ...ID_SCHEMA, description: 'The run (`GET /api/v1/syncs/{id}/`).' },
      status: { type: 'string', enum: ['queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled'] },
    },
    required: ['id', 'status'],
    nullable: true,
    example: { id: 51, status: 'succeeded' },
    description: 'The last run to this destination, or null.',
  })
  last_run: { id: number; status: string } | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-26T10:00:00.000Z',
    description: 'When a run last ended `succeeded` or `partially_failed`.',
  })
  last_synced_at: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2147483647,
    example: 15210,
    description: 'Members the destination holds, as accepted by the platform.',
  })
  members_sent: number;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 1,
    nullable: true,
    example: 0.62,
    description: 'The match rate the last run read back (see the run).',
  })
  match_rate: number | null;
}

/** An audience as one object is answered (GET, POST, PATCH): the list's fields and its destinations. */
export class AudienceDetailDto extends AudienceDto {
  @ApiProperty({
    type: [AudienceDestinationDto],
    maxItems: 100,
    readOnly: true,
    description: 'Each destination connection with its sync state (SPEC 10.3).',
    example: [
      {
        connection: 3,
        platform: 'google_ads',
        platform_audience_id: '8123456789',
        status_reason: null,
        last_run: { id: 51, status: 'succeeded' },
        last_synced_at: '2026-11-26T10:00:00.000Z',
        members_sent: 15210,
        match_rate: 0.62,
      },
    ],
  })
  destinations: AudienceDestinationDto[];
}

/**
 * The writable columns of an audience (SPEC section 3); `connections` is a link table, kept beside them.
 * The service creates, merges, compares and assigns by this table, so a new writable field is
 * one property above and one line here (and one in the mapper).
 */
export const AUDIENCE_FIELDS = [
  { api: 'name', property: 'name' },
  { api: 'description', property: 'description', initial: '' },
  { api: 'source_type', property: 'sourceType' },
  { api: 'rules', property: 'rules', initial: {}, json: true },
  { api: 'model_instance', property: 'modelInstanceId', initial: null, nullable: true },
  { api: 'min_score', property: 'minScore', initial: null, nullable: true },
  { api: 'status', property: 'status', initial: 'draft' },
] as const satisfies FieldTable<Audience>;

/** An example request with the 201 it gets: the request's fields over those of a new audience. */
function withCreated(request: Record<string, unknown>): Pick<CreateExample, 'request' | 'response'> {
  const defaults = { ...initialValues<Audience>(AUDIENCE_FIELDS), connections: [] };
  const at = '2026-11-21T10:00:00.000Z';
  return {
    request,
    response: {
      id: 41,
      customer: 1,
      ...defaults,
      ...request,
      size: null,
      members_updated_at: null,
      created_at: at,
      updated_at: at,
      // A new audience has not synced: each destination is there, with nothing sent yet.
      destinations: ((request.connections as number[] | undefined) ?? []).map((connection) => ({
        connection,
        platform: 'google_ads',
        platform_audience_id: null,
        status_reason: null,
        last_run: null,
        last_synced_at: null,
        members_sent: 0,
        match_rate: null,
      })),
    },
  };
}

/**
 * Named examples of `POST /api/v1/audiences/` (issue 25, item 15). The first is what Swagger UI's
 * Try-it-out sends: it names no other object, so it works as is in any workspace (the demo's too).
 * The fields' own examples above tell the story of the `model` one.
 */
export const CREATE_AUDIENCE_EXAMPLES: Record<string, CreateExample> = {
  rules: {
    summary: 'From rules: customers on the pro plan with at least three orders (works as is)',
    ...withCreated({
      name: 'Pro plan, 3+ orders',
      description: 'Customers on the pro plan who ordered at least three times.',
      source_type: 'rules',
      rules: {
        all: [
          { trait: 'plan', op: 'eq', value: 'pro' },
          { trait: 'orders', op: 'gte', value: 3 },
        ],
      },
    }),
  },
  model: {
    summary: 'From a model: high churn scores, sent to one connection',
    description:
      'Replace `12` with the id of one of your AI model instances (`GET /api/v1/ai-model-instances/`) and `3` with one of your connections (`GET /api/v1/connections/`).',
    ...withCreated({
      name: 'High-value churn risks',
      description: 'Customers with a churn score above 0.8.',
      source_type: 'model',
      model_instance: 12,
      min_score: 0.8,
      connections: [3],
    }),
  },
  upload: {
    summary: 'Uploaded: members come from the members endpoint or an import',
    ...withCreated({
      name: 'Newsletter subscribers (CRM export)',
      description: 'Hashed emails from the CRM, uploaded nightly.',
      source_type: 'upload',
    }),
  },
};
