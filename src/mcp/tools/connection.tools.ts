import { ListConnectionsQuery } from '../../connections/dto/list-connections.query.js';
import type { ConnectionsService } from '../../connections/connections.service.js';
import type { McpTool } from '../mcp-tool.js';
import { getTool, listTool } from './tool-helpers.js';

const restPath = '/api/v1/connections/';

export function connectionTools(connections: ConnectionsService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_connections',
      title: 'List ad-platform connections',
      description:
        "Lists the workspace's connections to Google Ads and Meta Ads accounts, newest first. Signals and audiences send data through " +
        'these; a signal can only be activated with a connection whose status is "active". Connections are made by people in the web ' +
        'interface, not through tools.',
      restPath,
      publicBaseUrl,
      query: ListConnectionsQuery,
      list: (call) => connections.list(call.query, call.url),
    }),
    getTool({
      name: 'get_connection',
      title: 'Get a connection',
      description: 'Returns one ad-platform connection by id (never its OAuth tokens). An id outside this workspace gives not_found.',
      restPath,
      get: (id) => connections.get(id),
    }),
  ];
}
