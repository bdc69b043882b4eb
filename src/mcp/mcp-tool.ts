import type { OpenAPIObject } from '@nestjs/swagger';
import type { Identity } from '../common/access/identity.js';
import type { JsonSchema } from '../openapi/json-schemas.js';

/**
 * One MCP tool: what a model reads (name, description, input schema), what it gets back (output
 * schema), and the call, which goes through the same services as the REST controllers.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  /**
   * The input and output JSON Schemas, read from the REST API's OpenAPI document: a field's rules
   * are stated once, on its DTO, and REST, the document and MCP all show them.
   */
  schemas(document: OpenAPIObject): { input: JsonSchema; output: JsonSchema };
  /** Whether the tool changes data: such tools are refused to viewers (SPEC section 1). */
  writes: boolean;
  /** Whether a call may do what cannot be undone (an update may archive, which is final); reads never do. */
  destructive: boolean;
  /** Whether calling again with the same arguments changes nothing more (reads and updates; not creates). */
  idempotent: boolean;
  call(identity: Identity, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** Tool arguments as query-string values, so list filters are read by the very code the REST lists use. */
export function asQuery(args: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    query[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return query;
}
