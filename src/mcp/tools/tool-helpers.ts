import { ApiError } from '../../common/errors/api-error.js';
import { type PagedQuery, type PagedQueryClass, readListQuery } from '../../common/pagination/list-query.js';
import { isId, MESSAGES } from '../../common/validation/fields.js';
import { validateDto } from '../../common/validation/validate-dto.js';
import { type JsonSchema, OperationSchemas } from '../../openapi/json-schemas.js';
import { asQuery, type McpTool } from '../mcp-tool.js';

export interface ListCall<Q extends PagedQuery> {
  /** The arguments read by the REST list's query DTO, page included. */
  query: Q;
  /** The equivalent REST list URL, so next/previous links match what the REST API gives. */
  url: URL;
}

/** Reads a list tool's arguments through the REST list's query DTO, as the REST list reads its query string. */
export function listCall<Q extends PagedQuery>(
  args: Record<string, unknown>,
  dto: PagedQueryClass<Q>,
  restPath: string,
  publicBaseUrl: string,
): ListCall<Q> {
  const text = asQuery(args);
  const query = readListQuery(dto, text);
  const url = new URL(restPath, `${publicBaseUrl}/`);
  for (const [key, value] of Object.entries(text)) url.searchParams.set(key, value);
  return { query, url };
}

/** A REST list page as the service builds it. */
interface RestPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: unknown[];
}

/**
 * An MCP list answers the page numbers to ask for next, not the REST links: those are URLs on the
 * service's own origin (localhost without PUBLIC_BASE_URL), which an agent can neither reach nor
 * authenticate to with its MCP token, while `page` is an argument of the same tool.
 */
function withPageNumbers({ count, next, previous, results }: RestPage, page: number): Record<string, unknown> {
  return { count, next_page: next === null ? null : page + 1, previous_page: previous === null ? null : page - 1, results };
}

/** The REST page's schema with `next`/`previous` replaced by the page numbers `withPageNumbers` answers. */
function pageNumbersSchema(rest: JsonSchema): JsonSchema {
  const { properties, required, ...schema } = rest as JsonSchema & { properties: Record<string, JsonSchema>; required: string[] };
  const { count, results } = properties;
  const pageNumber = (description: string) => ({
    anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }],
    description,
  });
  return {
    ...schema,
    required: required.map((name) => (name === 'next' ? 'next_page' : name === 'previous' ? 'previous_page' : name)),
    properties: {
      count,
      next_page: pageNumber('The `page` argument that gives the next page; null on the last page.'),
      previous_page: pageNumber('The `page` argument that gives the previous page; null on the first page.'),
      results,
    },
  } as JsonSchema;
}

/** The `id` argument of get/update tools. */
export function idArgument(args: Record<string, unknown>): number {
  const id = args.id;
  if (!isId(id)) {
    throw ApiError.field('id', id === undefined ? MESSAGES.required : MESSAGES.notInteger);
  }
  return id;
}

/**
 * Refuses arguments the tool does not take, each under its name, as REST refuses unknown body
 * fields (docs/api-conventions.md). A list tool would otherwise ignore a misspelt filter and
 * answer with more than the caller asked for.
 */
export function rejectUnknownArguments(args: Record<string, unknown>, known: ReadonlySet<string>): void {
  const errors: Record<string, string[]> = {};
  for (const name of Object.keys(args)) if (!known.has(name)) errors[name.slice(0, 64)] = ['Unknown argument.'];
  if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
}

/** The tool's arguments without `id`: the body of an update. */
export function withoutId(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([key]) => key !== 'id'));
}

/** A tool's own words; its schemas come from the REST operation it mirrors. */
interface ToolText {
  name: string;
  title: string;
  description: string;
  /** The REST collection the tool mirrors, e.g. `/api/v1/audiences/`: its operations hold the tool's schemas. */
  restPath: string;
}

/** Tool arguments are an object of exactly these properties (REST refuses unknown fields too). */
function argumentsSchema({ properties, required }: { properties: Record<string, JsonSchema>; required: string[] }): JsonSchema {
  return { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false };
}

/** The object id, read like the REST `{id}` path parameter. */
function idSchema(operation: OperationSchemas): JsonSchema {
  const { id } = operation.parameters('path').properties;
  if (!id) throw new Error('An item operation without an {id} path parameter.');
  return { description: 'The object id.', ...id };
}

const ID_ONLY: ReadonlySet<string> = new Set(['id']);

const itemPath = (restPath: string) => `${restPath}{id}/`;

const described = ({ name, title, description }: ToolText) => ({ name, title, description });

/** A read-only list tool: the REST list's query parameters in (read by its query DTO), its page envelope out. */
export function listTool<Q extends PagedQuery>(
  spec: ToolText & { publicBaseUrl: string; query: PagedQueryClass<Q>; list(call: ListCall<Q>): Promise<object> },
): McpTool {
  let known: Set<string> | undefined;
  return {
    ...described(spec),
    schemas(document) {
      const operation = new OperationSchemas(document, 'get', spec.restPath);
      const parameters = operation.parameters('query');
      known = new Set(Object.keys(parameters.properties));
      return { input: argumentsSchema(parameters), output: pageNumbersSchema(operation.response(200)) };
    },
    writes: false,
    destructive: false,
    idempotent: true,
    async call(_identity, args) {
      // The server reads every tool's schemas at start-up, so `known` is set before any call.
      if (!known) throw new Error(`Tool ${spec.name} was called before its schemas were read`);
      rejectUnknownArguments(args, known);
      const call = listCall(args, spec.query, spec.restPath, spec.publicBaseUrl);
      return withPageNumbers((await spec.list(call)) as RestPage, call.query.page.page);
    },
  };
}

/** A read-only tool returning one object by id (not_found outside the caller's workspace). */
export function getTool(spec: ToolText & { get(id: number): Promise<object> }): McpTool {
  return {
    ...described(spec),
    schemas(document) {
      const operation = new OperationSchemas(document, 'get', itemPath(spec.restPath));
      return { input: argumentsSchema({ properties: { id: idSchema(operation) }, required: ['id'] }), output: operation.response(200) };
    },
    writes: false,
    destructive: false,
    idempotent: true,
    async call(_identity, args) {
      rejectUnknownArguments(args, ID_ONLY);
      return { ...(await spec.get(idArgument(args))) };
    },
  };
}

/** Creates an object: the REST create body in (validated by the same DTO), the object out. */
export function createTool<Body extends object>(spec: ToolText & { body: new () => Body; create(body: Body): Promise<object> }): McpTool {
  return {
    ...described(spec),
    schemas(document) {
      const operation = new OperationSchemas(document, 'post', spec.restPath);
      const body = operation.requestBody(spec.body);
      return {
        input: argumentsSchema({ properties: body.properties as Record<string, JsonSchema>, required: (body.required as string[]) ?? [] }),
        output: operation.response(201),
      };
    },
    writes: true,
    destructive: false,
    idempotent: false,
    async call(_identity, args) {
      return { ...(await spec.create(await validateDto(spec.body, args))) };
    },
  };
}

/** Changes the given fields of an object: `id` and the REST PATCH body in (same DTO), the object out. */
export function updateTool<Body extends object>(
  spec: ToolText & { body: new () => Body; update(id: number, body: Body): Promise<object> },
): McpTool {
  return {
    ...described(spec),
    schemas(document) {
      const operation = new OperationSchemas(document, 'patch', itemPath(spec.restPath));
      const body = operation.requestBody(spec.body);
      return {
        input: argumentsSchema({
          properties: { id: idSchema(operation), ...(body.properties as Record<string, JsonSchema>) },
          required: ['id', ...((body.required as string[]) ?? [])],
        }),
        output: operation.response(200),
      };
    },
    writes: true,
    destructive: true,
    idempotent: true,
    async call(_identity, args) {
      return { ...(await spec.update(idArgument(args), await validateDto(spec.body, withoutId(args)))) };
    },
  };
}
