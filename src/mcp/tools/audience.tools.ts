import { ListAudiencesQuery } from '../../audiences/dto/list-audiences.query.js';
import type { AudiencesService } from '../../audiences/audiences.service.js';
import { CreateAudienceDto, UpdateAudienceDto } from '../../audiences/dto/audience.dto.js';
import type { McpTool } from '../mcp-tool.js';
import { createTool, getTool, listTool, updateTool } from './tool-helpers.js';

const restPath = '/api/v1/audiences/';

export function audienceTools(audiences: AudiencesService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_audiences',
      title: 'List audiences',
      description:
        "Lists the workspace's audiences (groups of people to target), newest first, one page at a time. Optional filters narrow the list.",
      restPath,
      publicBaseUrl,
      query: ListAudiencesQuery,
      list: (call) => audiences.list(call.query, call.url),
    }),
    getTool({
      name: 'get_audience',
      title: 'Get an audience',
      description: 'Returns one audience by id. An id that is not in this workspace gives a not_found error.',
      restPath,
      get: (id) => audiences.get(id),
    }),
    createTool({
      name: 'create_audience',
      title: 'Create an audience',
      description:
        'Creates an audience in status "draft" (or "active" if you pass it). Needs role editor or admin. Invalid input gives a ' +
        'validation_error naming each bad field.',
      restPath,
      body: CreateAudienceDto,
      create: (body) => audiences.create(body),
    }),
    updateTool({
      name: 'update_audience',
      title: 'Update an audience',
      description:
        'Changes the given fields of an audience; fields you leave out keep their value. Use status to activate or archive. ' +
        'An archived audience cannot change. Needs role editor or admin.',
      restPath,
      body: UpdateAudienceDto,
      update: (id, body) => audiences.update(id, body),
    }),
  ];
}
