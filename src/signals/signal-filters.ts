import { ApiError } from '../common/errors/api-error.js';
import { choiceFilter, integerFilter, type Query, searchPattern } from '../common/http/query-filters.js';
import { MESSAGES } from '../common/validation/fields.js';
import { SIGNAL_STATUS_CODES, SIGNAL_TYPES, type SignalStatusCode } from './signal.entity.js';
import type { SignalFilters } from './signals.repository.js';

/** The list filters of SPEC section 3, read the same way for REST query strings and MCP tool arguments. */
export function parseSignalFilters(query: Query): SignalFilters {
  return {
    status: statusFilter(query),
    signalType: choiceFilter(query, 'signal_type', SIGNAL_TYPES),
    modelInstanceId: integerFilter(query, 'model_instance'),
    audienceId: integerFilter(query, 'audience'),
    connectionId: integerFilter(query, 'connection'),
    search: searchPattern(query),
  };
}

/** `status` is an integer code (SPEC section 4): not an integer, or not one of the codes → 400. */
function statusFilter(query: Query): SignalStatusCode | undefined {
  const status = integerFilter(query, 'status');
  if (status === undefined) return undefined;
  if (!(SIGNAL_STATUS_CODES as number[]).includes(status)) throw ApiError.field('status', MESSAGES.choice(status, SIGNAL_STATUS_CODES));
  return status as SignalStatusCode;
}
