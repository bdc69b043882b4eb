import type { Identity } from '../auth/identity.js';

/** A JSON Schema object, as MCP clients read it from tools/list. */
export type JsonSchema = Record<string, unknown>;

/**
 * One MCP tool: what a model reads (name, description, input schema), what it gets back (output
 * schema), and the call, which goes through the same services as the REST controllers.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** Whether the tool changes data: such tools are refused to viewers (SPEC section 1). */
  writes: boolean;
  call(identity: Identity, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The list arguments every list tool takes, besides its filters. */
export const PAGE_ARGUMENTS: Record<string, JsonSchema> = {
  page: {
    type: 'integer',
    minimum: 1,
    description: '1-based page number. Default 1. A page past the end is an error (not_found, "Invalid page.").',
  },
  page_size: { type: 'integer', minimum: 1, maximum: 100, description: 'Items per page, default 20, at most 100.' },
  ordering: {
    type: 'string',
    enum: ['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'],
    description: 'Sort field; a leading "-" sorts descending. Default "-id" (newest first).',
  },
};

/** The output of every list tool: the REST list envelope. */
export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      count: { type: 'integer', description: 'Total number of matching items over all pages.' },
      next: { type: ['string', 'null'], description: 'REST URL of the next page, or null on the last page.' },
      previous: { type: ['string', 'null'], description: 'REST URL of the previous page, or null on the first page.' },
      results: { type: 'array', items: item },
    },
    required: ['count', 'next', 'previous', 'results'],
  };
}

export const ID_ARGUMENT: JsonSchema = { type: 'integer', minimum: 1, description: 'The object id.' };

/** Tool arguments as query-string values, so list filters are read by the very code the REST lists use. */
export function asQuery(args: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    query[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return query;
}
