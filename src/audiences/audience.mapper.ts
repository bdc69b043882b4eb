import type { AudienceDto } from './dto/audience.dto.js';
import type { Audience } from './audience.entity.js';

/** Field by field, so a new column never reaches a response by accident. */
export function toAudienceDto(audience: Audience, connectionIds: number[]): AudienceDto {
  return {
    id: audience.id,
    customer: audience.customerId,
    name: audience.name,
    description: audience.description,
    source_type: audience.sourceType,
    rules: audience.rules,
    model_instance: audience.modelInstanceId,
    min_score: audience.minScore,
    connections: connectionIds,
    status: audience.status,
    size: audience.size,
    created_at: audience.createdAt.toISOString(),
    updated_at: audience.updatedAt.toISOString(),
  };
}
