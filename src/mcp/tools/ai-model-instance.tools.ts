import { parseAiModelInstanceFilters } from '../../ai-model-instances/ai-model-instance-filters.js';
import type { AiModelInstancesService } from '../../ai-model-instances/ai-model-instances.service.js';
import { type JsonSchema, type McpTool } from '../mcp-tool.js';
import { getTool, listTool } from './tool-helpers.js';

const MODEL_STATUSES = ['pending', 'training', 'ready', 'failed', 'archived'];
const MODEL_TYPES = ['propensity', 'lifetime_value', 'churn', 'lookalike'];

const MODEL: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { type: 'integer' },
    name: { type: 'string' },
    model_type: { type: 'string', enum: MODEL_TYPES },
    base_model: { type: 'string' },
    parameters: { type: 'object' },
    status: {
      type: 'string',
      enum: MODEL_STATUSES,
      description: 'pending (not trained yet), training, ready (usable for scoring), failed (last training failed), archived (retired).',
    },
    metrics: { type: 'object', description: 'Quality metrics written by the training pipeline.' },
    version: { type: 'integer', description: 'How many times training has started.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export function aiModelInstanceTools(models: AiModelInstancesService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_ai_model_instances',
      title: 'List AI model instances',
      description:
        "Lists the workspace's AI model instances (predictive models: propensity, lifetime value, churn, lookalike), newest first. " +
        'Use a "ready" instance as the model_instance of an audience or signal.',
      filters: {
        status: { type: 'string', enum: MODEL_STATUSES, description: 'Only instances in this status.' },
        model_type: { type: 'string', enum: MODEL_TYPES, description: 'Only instances of this model type.' },
        search: { type: 'string', description: 'Only instances whose name contains this text (ignoring case).' },
      },
      item: MODEL,
      restPath: '/api/v1/ai-model-instances/',
      publicBaseUrl,
      list: (call) => models.list(parseAiModelInstanceFilters(call.query), call.page, call.url),
    }),
    getTool({
      name: 'get_ai_model_instance',
      title: 'Get an AI model instance',
      description:
        'Returns one AI model instance by id, with its status, version and training metrics. An id outside this workspace gives not_found.',
      item: MODEL,
      get: (id) => models.get(id),
    }),
  ];
}
