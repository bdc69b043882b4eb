import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import { ChoiceField, ID_SCHEMA, JsonObjectField, ReadOnlyField, RequiredString } from '../../common/validation/fields.js';
import { type AiModelInstance, MODEL_STATUSES, MODEL_TYPES } from '../ai-model-instance.entity.js';
import type { FieldTable } from '../../common/validation/field-table.js';
import type { CreateExample } from '../../openapi/create-examples.js';

const STATUS_RULES =
  '`pending` → `training`; `training` → `ready` or `failed`; `ready`/`failed` → `training` (retraining); any status → `archived`. ' +
  'Archived is final: the instance cannot change any more. Setting the current status again is a no-op; any other change is a 400 under `errors.status`. ' +
  'Each move into `training` adds 1 to `version`.';

/** Read-only fields a client may echo back in a body: accepted and ignored (SPEC section 3). */
class AiModelInstanceReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() version?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
}

export class CreateAiModelInstanceDto extends AiModelInstanceReadOnlyFields {
  @RequiredString({ max: 255, example: 'Churn model EU', description: 'Trimmed.' })
  name: string;

  @ChoiceField(MODEL_TYPES, { example: 'churn', description: 'What the model predicts.' })
  model_type: (typeof MODEL_TYPES)[number];

  @RequiredString({ max: 100, example: 'gbm-v3', description: 'The base model the instance is trained from. Trimmed.' })
  base_model: string;

  @JsonObjectField({ example: { learning_rate: 0.05, max_depth: 6 }, description: 'Training parameters.' })
  parameters?: Record<string, unknown>;

  @ChoiceField(MODEL_STATUSES, {
    optional: true,
    default: 'pending',
    example: 'training',
    description: `${STATUS_RULES} On create, \`pending\` or a status reachable from it (\`training\`, \`archived\`).`,
  })
  status?: (typeof MODEL_STATUSES)[number];

  @JsonObjectField({ example: { auc: 0.91, log_loss: 0.23 }, description: 'Evaluation results, written by the training pipeline.' })
  metrics?: Record<string, unknown>;
}

/** Every field optional; an explicit null is still checked (so `"name": null` is a 400, not a crash). */
export class UpdateAiModelInstanceDto extends PartialType(CreateAiModelInstanceDto, { skipNullProperties: false }) {}

/** The response: the swagger plugin reads types, `| null` and presence; the decorators add what TypeScript cannot say. */
export class AiModelInstanceDto {
  @ApiProperty({ ...ID_SCHEMA, example: 12, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ example: 'Churn model EU' })
  name: string;

  @ApiProperty({ enum: MODEL_TYPES, example: 'churn' })
  model_type: string;

  @ApiProperty({ example: 'gbm-v3' })
  base_model: string;

  @ApiProperty({ example: { learning_rate: 0.05, max_depth: 6 } })
  parameters: Record<string, unknown>;

  @ApiProperty({ enum: MODEL_STATUSES, example: 'ready', description: STATUS_RULES })
  status: string;

  @ApiProperty({ example: { auc: 0.91, log_loss: 0.23 } })
  metrics: Record<string, unknown>;

  @ApiProperty({
    type: 'integer',
    // A PostgreSQL integer column.
    minimum: 0,
    maximum: 2147483647,
    example: 2,
    readOnly: true,
    description: 'Training runs started: +1 each time the status moves into `training`.',
  })
  version: number;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}

/** An example request with the 201 it gets: the request's fields over those of a new model instance. */
function withCreated(request: Record<string, unknown>, version: number): Pick<CreateExample, 'request' | 'response'> {
  const at = '2026-11-21T10:00:00.000Z';
  return {
    request,
    response: { id: 12, customer: 1, parameters: {}, status: 'pending', metrics: {}, ...request, version, created_at: at, updated_at: at },
  };
}

/** Named examples of `POST /api/v1/ai-model-instances/` (issue 25, item 15); the first is what Try-it-out sends. */
export const CREATE_MODEL_EXAMPLES: Record<string, CreateExample> = {
  pending: {
    summary: 'A churn model, pending until its training starts',
    ...withCreated(
      { name: 'Churn model EU', model_type: 'churn', base_model: 'gbm-v3', parameters: { learning_rate: 0.05, max_depth: 6 } },
      0,
    ),
  },
  training: {
    summary: 'A propensity model whose training starts at once (version 1)',
    ...withCreated(
      {
        name: 'Purchase propensity (30 days)',
        model_type: 'propensity',
        base_model: 'gbm-v3',
        parameters: { horizon_days: 30 },
        status: 'training',
      },
      1,
    ),
  },
};

/**
 * The writable columns of an AI model instance (SPEC section 3); `version` follows the status.
 * The service creates, merges, compares and assigns by this table, so a new writable field is
 * one property above and one line here (and one in the mapper).
 */
export const MODEL_FIELDS = [
  { api: 'name', property: 'name' },
  { api: 'model_type', property: 'modelType' },
  { api: 'base_model', property: 'baseModel' },
  { api: 'parameters', property: 'parameters', initial: {}, json: true },
  { api: 'status', property: 'status', initial: 'pending' },
  { api: 'metrics', property: 'metrics', initial: {}, json: true },
] as const satisfies FieldTable<AiModelInstance>;
