import type { UserRole } from './user-role.js';

/** Who is calling, as established by the global auth guard (SPEC section 2). */
export type Identity =
  | { kind: 'user'; userId: number; customerId: number; role: UserRole; sessionId: string; tokenId: string }
  | { kind: 'api_key'; apiKeyId: number; customerId: number; scope: 'read' | 'write' }
  | { kind: 'mcp_token'; mcpTokenId: number; userId: number; customerId: number; role: UserRole };

declare module 'fastify' {
  interface FastifyRequest {
    identity?: Identity;
  }
}
