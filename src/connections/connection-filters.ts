import { choiceFilter, integerFilter, type Query } from '../common/http/query-filters.js';
import { CONNECTION_STATUSES, PLATFORMS } from './connection.entity.js';
import type { ConnectionFilters } from './connections.repository.js';

/** The list filters of SPEC section 3, read the same way for REST query strings and MCP tool arguments. */
export function parseConnectionFilters(query: Query): ConnectionFilters {
  return {
    customerId: integerFilter(query, 'customer'),
    platform: choiceFilter(query, 'platform', PLATFORMS),
    status: choiceFilter(query, 'status', CONNECTION_STATUSES),
  };
}
