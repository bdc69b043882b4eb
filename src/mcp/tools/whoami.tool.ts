import type { UsersService } from '../../users/users.service.js';
import type { McpTool } from '../mcp-tool.js';

export function whoamiTool(users: UsersService): McpTool {
  return {
    name: 'whoami',
    title: 'Who am I',
    description:
      'Returns the user this MCP token acts for: id, email, workspace (customer id) and role. Call it first to learn what you may do: ' +
      'role "viewer" can only read; "editor" and "admin" can also create and update. Every other tool only sees this workspace.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        email: { type: 'string' },
        customer: { type: 'integer', description: 'The workspace id.' },
        role: { type: 'string', enum: ['admin', 'editor', 'viewer'] },
      },
      required: ['id', 'email', 'customer', 'role'],
    },
    writes: false,
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
