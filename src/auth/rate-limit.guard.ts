import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, LIMIT_BY_IP } from './access.decorators.js';
import type { Identity } from './identity.js';
import { RequestRateLimit } from './request-rate-limit.js';

/**
 * The second global guard (SPEC section 8): one request budget per credential — per user for
 * JWTs, per API key, per MCP token — and per client IP on the public token endpoints. Runs after
 * authentication, so an unauthenticated request never spends anyone's budget.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly rateLimit: RequestRateLimit,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (accessOf(this.reflector, context) === 'public') {
      if (this.reflector.get<boolean | undefined>(LIMIT_BY_IP, context.getHandler()))
        await this.rateLimit.consume(`ip:${request.ip}`, reply);
      return true;
    }
    if (request.identity) await this.rateLimit.consume(rateLimitKey(request.identity), reply);
    return true;
  }
}

function rateLimitKey(identity: Identity): string {
  if (identity.kind === 'api_key') return `api_key:${identity.apiKeyId}`;
  if (identity.kind === 'mcp_token') return `mcp_token:${identity.mcpTokenId}`;
  return `user:${identity.userId}`;
}
