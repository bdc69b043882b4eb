import { ListAiModelInstancesQuery } from '../../ai-model-instances/dto/list-ai-model-instances.query.js';
import type { AiModelInstancesService } from '../../ai-model-instances/ai-model-instances.service.js';
import type { McpTool } from '../mcp-tool.js';
import { getTool, listTool } from './tool-helpers.js';

const restPath = '/api/v1/ai-model-instances/';

export function aiModelInstanceTools(models: AiModelInstancesService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_ai_model_instances',
      title: 'List AI model instances',
      description:
        "Lists the workspace's AI model instances (predictive models: propensity, lifetime value, churn, lookalike), newest first. " +
        'Use a "ready" instance as the model_instance of an audience or signal.',
      restPath,
      publicBaseUrl,
      query: ListAiModelInstancesQuery,
      list: (call) => models.list(call.query, call.url),
    }),
    getTool({
      name: 'get_ai_model_instance',
      title: 'Get an AI model instance',
      description:
        'Returns one AI model instance by id, with its status, version and training metrics. An id outside this workspace gives not_found.',
      restPath,
      get: (id) => models.get(id),
    }),
  ];
}
