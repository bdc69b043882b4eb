import { choiceFilter, type Query, searchPattern } from '../common/http/query-filters.js';
import { MODEL_STATUSES, MODEL_TYPES } from './ai-model-instance.entity.js';
import type { AiModelInstanceFilters } from './ai-model-instances.repository.js';

/** The list filters of SPEC section 3, read the same way for REST query strings and MCP tool arguments. */
export function parseAiModelInstanceFilters(query: Query): AiModelInstanceFilters {
  return {
    status: choiceFilter(query, 'status', MODEL_STATUSES),
    modelType: choiceFilter(query, 'model_type', MODEL_TYPES),
    search: searchPattern(query),
  };
}
