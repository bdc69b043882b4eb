import type { UsersService } from '../../users/users.service.js';
import { OperationSchemas } from '../../openapi/json-schemas.js';
import type { McpTool } from '../mcp-tool.js';

/** What whoami answers: the REST current user (GET /api/v1/users/me/) without date_joined. */
const FIELDS = ['id', 'email', 'customer', 'role'];

export function whoamiTool(users: UsersService): McpTool {
  return {
    name: 'whoami',
    title: 'Who am I',
    description:
      'Returns the user this MCP token acts for: id, email, workspace (customer id) and role. Call it first to learn what you may do: ' +
      'role "viewer" can only read; "editor" and "admin" can also create and update. Every other tool only sees this workspace.',
    schemas(document) {
      const user = new OperationSchemas(document, 'get', '/api/v1/users/me/').response(200);
      const properties = user.properties as Record<string, unknown>;
      return {
        input: { type: 'object', properties: {}, additionalProperties: false },
        output: {
          type: 'object',
          properties: Object.fromEntries(FIELDS.map((field) => [field, properties[field]])),
          required: FIELDS,
        },
      };
    },
    writes: false,
    destructive: false,
    idempotent: true,
    async call(identity) {
      const userId = identity.kind === 'api_key' ? undefined : identity.userId;
      const user = userId === undefined ? null : await users.findById(userId);
      return {
        id: user?.id ?? null,
        email: user?.email ?? null,
        customer: identity.customerId,
        role: identity.kind === 'api_key' ? null : identity.role,
      };
    },
  };
}
