import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { Tenant } from '../common/tenancy/tenant.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { accessOf, LIMIT_BY_IP } from '../common/access/access.decorators.js';
import { assertMayCall } from './access-policy.js';
import { Authenticator } from './authenticator.js';
import type { Identity } from '../common/access/identity.js';
import { RequestRateLimit } from './request-rate-limit.js';

/**
 * The one global guard (SPEC sections 1, 2 and 8), deny by default, in three steps each owned
 * elsewhere: the Authenticator says who is calling (401 otherwise, and 429 once the client IP has
 * failed too often this minute) and the caller's workspace is
 * entered into the TenantContext; RequestRateLimit spends the credential's budget (429); the
 * access policy decides whether that caller may use this route (403). Public routes skip all
 * three, except the token endpoints, which spend a per-IP budget.
 *
 * One guard rather than three: each global guard is another metadata lookup and another awaited
 * step in Nest's guard loop on every request, which measured about 2% CPU on a detail request.
 */
@Injectable()
export class RequestGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly rateLimit: RequestRateLimit,
    private readonly tenants: TenantContext,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = accessOf(this.reflector, context);
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    // Without a credential a public_or_personal route is public; with one it is personal.
    if (access === 'public' || (access === 'public_or_personal' && request.headers.authorization === undefined)) {
      if (this.reflector.get<boolean | undefined>(LIMIT_BY_IP, context.getHandler()))
        await this.rateLimit.consume(`ip:${request.ip}`, reply);
      return true;
    }
    const required = access === 'public_or_personal' ? 'personal' : access;
    let identity: Identity;
    try {
      identity = await this.authenticator.authenticate(required, context);
    } catch (error) {
      // Every 401 spends the client IP's budget of failures; past it, guesses get 429 instead (SPEC section 8).
      if (error instanceof ApiError && error.statusCode === 401) await this.rateLimit.consumeFailure(`ip:${request.ip}`);
      throw error;
    }
    request.identity = identity;
    this.tenants.enter(Tenant.of(identity));
    await this.rateLimit.consume(rateLimitKey(identity), reply);
    assertMayCall(identity, required, request.method);
    return true;
  }
}

/** One request budget per credential: per user for JWTs, per API key, per MCP token. */
function rateLimitKey(identity: Identity): string {
  if (identity.kind === 'api_key') return `api_key:${identity.apiKeyId}`;
  if (identity.kind === 'mcp_token') return `mcp_token:${identity.mcpTokenId}`;
  return `user:${identity.userId}`;
}
