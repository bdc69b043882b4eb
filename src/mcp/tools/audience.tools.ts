import { parseAudienceFilters } from '../../audiences/audience-filters.js';
import type { AudiencesService } from '../../audiences/audiences.service.js';
import { CreateAudienceDto, UpdateAudienceDto } from '../../audiences/dto/audience.dto.js';
import { validateDto } from '../../common/validation/validate-dto.js';
import { ID_ARGUMENT, type JsonSchema, type McpTool } from '../mcp-tool.js';
import { getTool, idArgument, listTool, withoutId } from './tool-helpers.js';

const AUDIENCE: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { type: 'integer' },
    name: { type: 'string' },
    description: { type: 'string' },
    source_type: { type: 'string', enum: ['rules', 'model', 'upload'] },
    rules: { type: 'object' },
    model_instance: { type: ['integer', 'null'] },
    min_score: { type: ['number', 'null'] },
    connections: { type: 'array', items: { type: 'integer' } },
    status: { type: 'string', enum: ['draft', 'active', 'archived'] },
    size: { type: ['integer', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const WRITABLE: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 255, description: 'Audience name, unique in the workspace ignoring letter case.' },
  description: { type: 'string', maxLength: 2000, description: 'Free text, default "".' },
  source_type: { type: 'string', enum: ['rules', 'model', 'upload'], description: 'Where members come from.' },
  rules: { type: 'object', description: 'Targeting rules as a JSON object (at most 64 KiB, nesting at most 10 levels).' },
  model_instance: { type: ['integer', 'null'], description: 'Id of an AI model instance; required when source_type is "model".' },
  min_score: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'Score threshold 0–1; only with source_type "model".' },
  connections: { type: 'array', items: { type: 'integer' }, description: 'Ids of destination connections (ad accounts).' },
  status: {
    type: 'string',
    enum: ['draft', 'active', 'archived'],
    description: 'draft → active, draft or active → archived. "archived" is final: the audience can no longer change.',
  },
};

export function audienceTools(audiences: AudiencesService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_audiences',
      title: 'List audiences',
      description:
        "Lists the workspace's audiences (groups of people to target), newest first, one page at a time. Optional filters narrow the list.",
      filters: {
        status: { type: 'string', enum: ['draft', 'active', 'archived'], description: 'Only audiences in this status.' },
        source_type: { type: 'string', enum: ['rules', 'model', 'upload'], description: 'Only audiences of this source type.' },
        search: { type: 'string', description: 'Only audiences whose name contains this text (ignoring case).' },
      },
      item: AUDIENCE,
      restPath: '/api/v1/audiences/',
      publicBaseUrl,
      list: (call) => audiences.list(parseAudienceFilters(call.query), call.page, call.url),
    }),
    getTool({
      name: 'get_audience',
      title: 'Get an audience',
      description: 'Returns one audience by id. An id that is not in this workspace gives a not_found error.',
      item: AUDIENCE,
      get: (id) => audiences.get(id),
    }),
    {
      name: 'create_audience',
      title: 'Create an audience',
      description:
        'Creates an audience in status "draft" (or "active" if you pass it). Needs role editor or admin. Invalid input gives a ' +
        'validation_error naming each bad field.',
      inputSchema: { type: 'object', properties: WRITABLE, required: ['name', 'source_type'], additionalProperties: false },
      outputSchema: AUDIENCE,
      writes: true,
      async call(_identity, args) {
        return { ...(await audiences.create(await validateDto(CreateAudienceDto, args))) };
      },
    },
    {
      name: 'update_audience',
      title: 'Update an audience',
      description:
        'Changes the given fields of an audience; fields you leave out keep their value. Use status to activate or archive. ' +
        'An archived audience cannot change. Needs role editor or admin.',
      inputSchema: { type: 'object', properties: { id: ID_ARGUMENT, ...WRITABLE }, required: ['id'], additionalProperties: false },
      outputSchema: AUDIENCE,
      writes: true,
      async call(_identity, args) {
        const id = idArgument(args);
        return { ...(await audiences.update(id, await validateDto(UpdateAudienceDto, withoutId(args)))) };
      },
    },
  ];
}
