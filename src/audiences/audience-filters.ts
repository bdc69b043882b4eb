import { choiceFilter, integerFilter, type Query, searchPattern } from '../common/http/query-filters.js';
import { AUDIENCE_STATUSES, SOURCE_TYPES } from './audience.entity.js';
import type { AudienceFilters } from './audiences.repository.js';

/** The list filters of SPEC section 3, read the same way for REST query strings and MCP tool arguments. */
export function parseAudienceFilters(query: Query): AudienceFilters {
  return {
    customerId: integerFilter(query, 'customer'),
    status: choiceFilter(query, 'status', AUDIENCE_STATUSES),
    sourceType: choiceFilter(query, 'source_type', SOURCE_TYPES),
    search: searchPattern(query),
  };
}
