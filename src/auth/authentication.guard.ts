import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { Tenant } from '../common/tenancy/tenant.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { McpTokensService } from '../mcp-tokens/mcp-tokens.service.js';
import { ACCESS, type Access, LIMIT_BY_IP } from './access.decorators.js';
import type { Identity } from './identity.js';
import { RequestRateLimit } from './request-rate-limit.js';
import { API_KEY_CHALLENGE } from './strategies/api-key.strategy.js';

const CHALLENGES = `Bearer realm="api", ${API_KEY_CHALLENGE}`;
const MCP_CHALLENGE = 'Bearer realm="mcp"';
const MAX_AUTHORIZATION_LENGTH = 4096;
/** One scheme, one space, one token of visible ASCII: anything looser is refused before any parsing. */
const AUTHORIZATION = /^(Bearer|Api-Key) ([\x21-\x7e]+)$/;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A passport strategy run through @nestjs/passport, its failures turned into our 401. */
function passportAuthenticator(strategy: 'jwt' | 'api-key', challenge: string): CanActivate {
  class Authenticator extends AuthGuard(strategy) {
    override handleRequest<T>(error: unknown, identity: T): T {
      if (error instanceof ApiError) throw error;
      if (error || !identity)
        throw new ApiError(401, 'authentication_failed', 'Invalid credentials.', undefined, { 'www-authenticate': challenge });
      return identity;
    }
  }
  return new Authenticator({ session: false });
}

/**
 * The one global guard (SPEC sections 1-2): picks the passport strategy from the Authorization
 * scheme, sets `request.identity`, counts the identity's rate limit, and applies the route's
 * access rule — personal routes are for users only; writes need an admin/editor or a write key.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  private readonly jwt = passportAuthenticator('jwt', 'Bearer realm="api"');
  private readonly apiKey = passportAuthenticator('api-key', API_KEY_CHALLENGE);

  constructor(
    private readonly reflector: Reflector,
    @Inject(RequestRateLimit) private readonly rateLimit: RequestRateLimit,
    private readonly mcpTokens: McpTokensService,
    private readonly tenants: TenantContext,
  ) {}

  /** /mcp takes a personal MCP token and nothing else: a JWT or an API key there is a 401 too. */
  private async authenticateMcp(header: string | undefined): Promise<Identity> {
    const challenge = { 'www-authenticate': MCP_CHALLENGE };
    if (header === undefined || header === '') {
      throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.', undefined, challenge);
    }
    const match = header.length <= MAX_AUTHORIZATION_LENGTH ? /^Bearer (mcp_[\x21-\x7e]+)$/.exec(header) : null;
    const identity = match ? await this.mcpTokens.authenticate(match[1]!) : null;
    if (!identity) throw new ApiError(401, 'authentication_failed', 'A valid personal MCP token is required.', undefined, challenge);
    return identity;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS, [context.getHandler(), context.getClass()]) ?? 'workspace';
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (access === 'public') {
      if (this.reflector.get<boolean | undefined>(LIMIT_BY_IP, context.getHandler()))
        await this.rateLimit.consume(`ip:${request.ip}`, reply);
      return true;
    }

    const header = request.headers.authorization;
    if (access === 'mcp') {
      request.identity = await this.authenticateMcp(header);
      this.tenants.enter(Tenant.of(request.identity));
      await this.rateLimit.consume(rateLimitKey(request.identity), reply);
      return true;
    }
    if (header === undefined || header === '') {
      throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.', undefined, {
        'www-authenticate': CHALLENGES,
      });
    }
    const match = header.length <= MAX_AUTHORIZATION_LENGTH ? AUTHORIZATION.exec(header) : null;
    if (!match)
      throw new ApiError(401, 'authentication_failed', 'Invalid Authorization header.', undefined, { 'www-authenticate': CHALLENGES });

    const authenticator = match[1] === 'Bearer' ? this.jwt : this.apiKey;
    await authenticator.canActivate(context);
    const identity = (request as FastifyRequest & { user?: Identity }).user!;
    request.identity = identity;
    this.tenants.enter(Tenant.of(identity));

    await this.rateLimit.consume(rateLimitKey(identity), reply);
    authorize(identity, access, request.method);
    return true;
  }
}

/** One request budget per credential: per user for JWTs, per key, per MCP token. */
function rateLimitKey(identity: Identity): string {
  if (identity.kind === 'api_key') return `api_key:${identity.apiKeyId}`;
  if (identity.kind === 'mcp_token') return `mcp_token:${identity.mcpTokenId}`;
  return `user:${identity.userId}`;
}

function authorize(identity: Identity, access: Access, method: string): void {
  if (access === 'personal') {
    if (identity.kind !== 'user') throw ApiError.permissionDenied('This endpoint is for users; an API key cannot use it.');
    return;
  }
  if (!READ_METHODS.has(method)) assertCanWrite(identity);
}

/**
 * The write rule of SPEC section 1, in one place: viewers and read-scoped keys only read. The
 * guard applies it to every non-GET route; the MCP tools apply it to their write tools.
 */
export function assertCanWrite(identity: Identity): void {
  if (identity.kind === 'api_key' ? identity.scope !== 'write' : identity.role === 'viewer') {
    throw ApiError.permissionDenied(identity.kind === 'api_key' ? 'This API key is read-only.' : 'Viewers can only read.');
  }
}
