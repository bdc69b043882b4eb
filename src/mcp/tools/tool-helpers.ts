import { ApiError } from '../../common/errors/api-error.js';
import { parsePageRequest, type PageRequest } from '../../common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../../common/tenancy/tenant-repository.js';
import { MESSAGES } from '../../common/validation/fields.js';
import { asQuery, ID_ARGUMENT, type JsonSchema, type McpTool, PAGE_ARGUMENTS, pageSchema } from '../mcp-tool.js';

export interface ListCall {
  query: Record<string, string>;
  page: PageRequest;
  /** The equivalent REST list URL, so next/previous links match what the REST API gives. */
  url: URL;
}

/** Reads the page and ordering arguments of a list tool the way the REST lists read their query string. */
export function listCall(args: Record<string, unknown>, restPath: string, publicBaseUrl: string): ListCall {
  const query = asQuery(args);
  const page = parsePageRequest(query, { orderingFields: ORDERING_FIELDS });
  const url = new URL(restPath, `${publicBaseUrl}/`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return { query, page, url };
}

/** The `id` argument of get/update tools. */
export function idArgument(args: Record<string, unknown>): number {
  const id = args.id;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > 2_147_483_647) {
    throw ApiError.field('id', id === undefined ? MESSAGES.required : MESSAGES.notInteger);
  }
  return id;
}

/** The tool's arguments without `id`: the body of an update. */
export function withoutId(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([key]) => key !== 'id'));
}

interface ListToolSpec {
  name: string;
  title: string;
  description: string;
  /** The tool's filter arguments; the paging arguments are added. */
  filters: Record<string, JsonSchema>;
  item: JsonSchema;
  /** The equivalent REST list path, for next/previous. */
  restPath: string;
  publicBaseUrl: string;
  /** The service call, with the arguments read as the REST list reads its query string. */
  list(call: ListCall): Promise<object>;
}

/** A read-only list tool over the REST list envelope. */
export function listTool(spec: ListToolSpec): McpTool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: { type: 'object', properties: { ...spec.filters, ...PAGE_ARGUMENTS }, additionalProperties: false },
    outputSchema: pageSchema(spec.item),
    writes: false,
    async call(_identity, args) {
      return { ...(await spec.list(listCall(args, spec.restPath, spec.publicBaseUrl))) };
    },
  };
}

interface GetToolSpec {
  name: string;
  title: string;
  description: string;
  item: JsonSchema;
  get(id: number): Promise<object>;
}

/** A read-only tool returning one object by id (not_found outside the caller's workspace). */
export function getTool(spec: GetToolSpec): McpTool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: { type: 'object', properties: { id: ID_ARGUMENT }, required: ['id'], additionalProperties: false },
    outputSchema: spec.item,
    writes: false,
    async call(_identity, args) {
      return { ...(await spec.get(idArgument(args))) };
    },
  };
}
