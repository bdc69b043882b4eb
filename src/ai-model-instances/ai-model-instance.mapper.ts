import type { AiModelInstanceDto } from './dto/ai-model-instance.dto.js';
import type { AiModelInstance } from './ai-model-instance.entity.js';

/** Field by field, so a new column never reaches a response by accident. */
export function toAiModelInstanceDto(model: AiModelInstance): AiModelInstanceDto {
  return {
    id: model.id,
    customer: model.customerId,
    name: model.name,
    model_type: model.modelType,
    base_model: model.baseModel,
    parameters: model.parameters,
    status: model.status,
    metrics: model.metrics,
    version: model.version,
    created_at: model.createdAt.toISOString(),
    updated_at: model.updatedAt.toISOString(),
  };
}
