import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { isDependencyUnavailable } from '../common/errors/database-errors.js';
import { McpTokensService } from '../mcp-tokens/mcp-tokens.service.js';
import type { Access } from '../common/access/access.decorators.js';
import type { Identity } from '../common/access/identity.js';
import { API_KEY_CHALLENGE } from './strategies/api-key.strategy.js';

const CHALLENGES = `Bearer realm="api", ${API_KEY_CHALLENGE}`;
const MCP_CHALLENGE = 'Bearer realm="mcp"';
const MAX_AUTHORIZATION_LENGTH = 4096;
/** One scheme, one space, one token of visible ASCII: anything looser is refused before any parsing. */
const AUTHORIZATION = /^(Bearer|Api-Key) ([\x21-\x7e]+)$/;
const MCP_AUTHORIZATION = /^Bearer (mcp_[\x21-\x7e]+)$/;

/**
 * A passport strategy run through @nestjs/passport, its failures turned into our 401. A database
 * that could not be asked is not a failure of the credential: that error goes on to the filter
 * (503), since a 401 would tell the client to throw away a valid credential (SPEC section 8).
 */
function passportAuthenticator(strategy: 'jwt' | 'api-key', challenge: string): CanActivate {
  class PassportStrategyGuard extends AuthGuard(strategy) {
    override handleRequest<T>(error: unknown, identity: T): T {
      if (error instanceof ApiError || isDependencyUnavailable(error)) throw error;
      if (error || !identity)
        throw new ApiError(401, 'authentication_failed', 'Invalid credentials.', undefined, { 'www-authenticate': challenge });
      return identity;
    }
  }
  return new PassportStrategyGuard({ session: false });
}

/**
 * Who is calling (SPEC section 2): picks the passport strategy from the Authorization scheme (JWT
 * or API key; a personal MCP token on /mcp and only there) and answers 401 with the right
 * challenge for a missing or bad credential. The request guard calls it for every non-public route.
 */
@Injectable()
export class Authenticator {
  private readonly jwt = passportAuthenticator('jwt', 'Bearer realm="api"');
  private readonly apiKey = passportAuthenticator('api-key', API_KEY_CHALLENGE);

  constructor(private readonly mcpTokens: McpTokensService) {}

  authenticate(access: Exclude<Access, 'public'>, context: ExecutionContext): Promise<Identity> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return access === 'mcp' ? this.authenticateMcp(request) : this.authenticateApi(request, context);
  }

  private async authenticateApi(request: FastifyRequest, context: ExecutionContext): Promise<Identity> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.', undefined, {
        'www-authenticate': CHALLENGES,
      });
    }
    const match = header.length <= MAX_AUTHORIZATION_LENGTH ? AUTHORIZATION.exec(header) : null;
    if (!match)
      throw new ApiError(401, 'authentication_failed', 'Invalid Authorization header.', undefined, { 'www-authenticate': CHALLENGES });
    await (match[1] === 'Bearer' ? this.jwt : this.apiKey).canActivate(context);
    return (request as FastifyRequest & { user?: Identity }).user!;
  }

  /**
   * /mcp takes a personal MCP token and nothing else: a JWT or an API key there is a 401 too. The
   * token lookup is not caught: a database outage there reaches the filter as a 503.
   */
  private async authenticateMcp(request: FastifyRequest): Promise<Identity> {
    const header = request.headers.authorization;
    const challenge = { 'www-authenticate': MCP_CHALLENGE };
    if (header === undefined || header === '') {
      throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.', undefined, challenge);
    }
    const match = header.length <= MAX_AUTHORIZATION_LENGTH ? MCP_AUTHORIZATION.exec(header) : null;
    const identity = match ? await this.mcpTokens.authenticate(match[1]!) : null;
    if (!identity) throw new ApiError(401, 'authentication_failed', 'A valid personal MCP token is required.', undefined, challenge);
    return identity;
  }
}
