import { parseConnectionFilters } from '../../connections/connection-filters.js';
import type { ConnectionsService } from '../../connections/connections.service.js';
import { type JsonSchema, type McpTool } from '../mcp-tool.js';
import { getTool, listTool } from './tool-helpers.js';

const PLATFORMS = ['google_ads', 'meta_ads'];
const STATUSES = ['active', 'expired', 'revoked', 'error'];

const CONNECTION: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { type: 'integer' },
    platform: { type: 'string', enum: PLATFORMS },
    external_account_id: { type: 'string', description: 'The account id at the ad platform.' },
    account_name: { type: 'string' },
    status: {
      type: 'string',
      enum: STATUSES,
      description:
        'active (usable), expired (the grant must be renewed), revoked (the grant was withdrawn), error (the platform refused it).',
    },
    scopes: { type: 'array', items: { type: 'string' } },
    connected_by: { type: ['integer', 'null'] },
    token_expires_at: { type: ['string', 'null'], format: 'date-time' },
    last_refreshed_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export function connectionTools(connections: ConnectionsService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_connections',
      title: 'List ad-platform connections',
      description:
        "Lists the workspace's connections to Google Ads and Meta Ads accounts, newest first. Signals and audiences send data through " +
        'these; a signal can only be activated with a connection whose status is "active". Connections are made by people in the web ' +
        'interface, not through tools.',
      filters: {
        platform: { type: 'string', enum: PLATFORMS, description: 'Only connections to this platform.' },
        status: { type: 'string', enum: STATUSES, description: 'Only connections in this status.' },
      },
      item: CONNECTION,
      restPath: '/api/v1/connections/',
      publicBaseUrl,
      list: (call) => connections.list(parseConnectionFilters(call.query), call.page, call.url),
    }),
    getTool({
      name: 'get_connection',
      title: 'Get a connection',
      description: 'Returns one ad-platform connection by id (never its OAuth tokens). An id outside this workspace gives not_found.',
      item: CONNECTION,
      get: (id) => connections.get(id),
    }),
  ];
}
