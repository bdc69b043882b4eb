import { readFileSync } from 'node:fs';

/** A schema object in the OpenAPI 3.0 dialect (JSON Schema plus `nullable`, `example`). */
export type Schema = { readonly [keyword: string]: unknown };

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';

export interface Parameter {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface DocumentedResponse {
  description: string;
  headers?: Record<string, { required?: boolean; schema?: Schema }>;
  content?: Record<string, { schema?: Schema }>;
}

interface OperationObject {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses: Record<string, DocumentedResponse>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, Schema> };
}

/** One operation of the document, its schemas with every `$ref` resolved. */
export interface Operation {
  /** `METHOD /path`, as the document names it. */
  key: string;
  operationId: string;
  method: HttpMethod;
  path: string;
  parameters: Parameter[];
  /** Media type → schema of the request body; undefined when the operation takes none. */
  requestBody: { required: boolean; content: Record<string, Schema> } | undefined;
  /** Status code (as the document writes it) → response, schemas resolved. */
  responses: Record<string, DocumentedResponse>;
}

export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'];

export function loadDocument(url: URL): OpenApiDocument {
  return JSON.parse(readFileSync(url, 'utf8')) as OpenApiDocument;
}

/** Every operation of every path, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method.toLowerCase()] as OperationObject | undefined;
      if (!operation) continue;
      const resolved = resolveRefs(operation, document) as OperationObject;
      const body = resolved.requestBody;
      operations.push({
        key: `${method} ${path}`,
        operationId: resolved.operationId,
        method,
        path,
        parameters: resolved.parameters ?? [],
        requestBody: body && {
          required: body.required ?? false,
          content: Object.fromEntries(Object.entries(body.content).map(([type, media]) => [type, media.schema ?? {}])),
        },
        responses: resolved.responses,
      });
    }
  }
  return operations;
}

/**
 * A copy of `value` with every local `$ref` (`#/components/...`) replaced by its target. The
 * document has no recursive schemas; one would be a loop here, so it is refused rather than
 * followed.
 */
export function resolveRefs(value: unknown, document: OpenApiDocument, seen: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveRefs(item, document, seen));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    if (seen.includes(ref)) throw new Error(`Recursive $ref ${ref}: the fuzzer cannot generate it.`);
    return resolveRefs(pointer(document, ref), document, [...seen, ref]);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveRefs(item, document, seen)]));
}

function pointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, not ${ref}.`);
  let target: unknown = document;
  for (const token of ref.slice(2).split('/')) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    target = typeof target === 'object' && target !== null ? (target as Record<string, unknown>)[key] : undefined;
  }
  if (target === undefined) throw new Error(`Unresolvable $ref ${ref}.`);
  return target;
}

/** `/api/v1/audiences/{id}/` → `/api/v1/audiences/`: the collection whose objects the path names. */
export function collectionOf(path: string): string {
  return path.replace(/\{[^}]+\}\/?$/, '');
}
