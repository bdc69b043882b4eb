import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import { ChoiceField, ID_SCHEMA, JsonObjectField, ReadOnlyField, RequiredString } from '../../common/validation/fields.js';
import { MODEL_STATUSES, MODEL_TYPES } from '../ai-model-instance.entity.js';

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
