import { Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Personal, PublicLimitedByIp } from '../../common/access/access.decorators.js';
import { RANDOM_SECRET_PATTERN, randomSecret } from '../../common/crypto/secret-hash.js';
import { ApiError } from '../../common/errors/api-error.js';
import { cookieOf } from '../../common/http/cookies.js';
import { requestUrl } from '../../common/pagination/list-endpoint.js';
import { validateDto } from '../../common/validation/validate-dto.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import { ApiProblem } from '../../common/errors/problem-details.schema.js';
import { AD_PLATFORM_SLUGS, platformOfSlug } from './ad-platform-clients.js';
import { DEFAULT_RETURN_TO, ConnectionFlowService, FLOW_LIFETIME_MS } from './connection-flow.service.js';
import { ConnectionFlowStartedDto, StartConnectionFlowDto } from './dto/connection-flow.dto.js';

const PLATFORM_PARAM = ApiParam({
  name: 'platform',
  enum: AD_PLATFORM_SLUGS,
  description: 'The ad platform; one whose OAuth app is not configured answers 404.',
});

/**
 * The cookie that ties a flow to the browser that started it: HttpOnly, SameSite=Lax (sent on the
 * provider's top-level redirect back to the callback), scoped to /oauth/connections/.
 */
const FLOW_COOKIE = 'connection_flow';

function flowCookieOf(request: FastifyRequest): string | undefined {
  const value = cookieOf(request, FLOW_COOKIE);
  return value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

/** The OAuth flows that create connections (SPEC section 6), started from the web interface. */
@ApiTags('connections')
@Controller('oauth/connections')
export class ConnectionFlowController {
  constructor(
    private readonly flows: ConnectionFlowService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post(':platform/start')
  @HttpCode(200)
  @Personal()
  @PLATFORM_PARAM
  @ApiOperation({
    summary: 'Start connecting ad accounts',
    description:
      'For an admin or editor signed in with a JWT (a viewer or an API key → 403). Answers the provider’s authorization URL; ' +
      'after consent the provider sends the browser to the callback, which creates or refreshes one connection per account ' +
      'the grant reaches, in your workspace. The state is single use and valid for 10 minutes.',
  })
  @ApiBody({ type: StartConnectionFlowDto, required: false })
  @ApiOkResponse({
    type: ConnectionFlowStartedDto,
    description: 'Where to send the browser.',
    headers: {
      'Set-Cookie': {
        description: `\`${FLOW_COOKIE}\`: an opaque id of this browser's connection flows, which the callback checks; HttpOnly, SameSite=Lax, Path=/oauth/connections/, 10 minutes (Secure over https).`,
        schema: { type: 'string', maxLength: 256, pattern: `^${FLOW_COOKIE}=` },
      },
    },
  })
  @ApiProblem(400, '`return_to` is not a path of the web interface (`validation_error`).', {
    errors: { return_to: ['Must be a path of the web interface, such as /app/connections.'] },
  })
  @ApiProblem(403, 'A viewer, or an API key (`permission_denied`).', { detail: 'Viewers cannot connect accounts.' })
  @ApiProblem(404, 'Unknown platform, or its OAuth app is not configured (`not_found`).')
  async start(
    @Param('platform') slug: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConnectionFlowStartedDto> {
    const identity = request.identity;
    if (identity?.kind !== 'user') throw ApiError.permissionDenied();
    if (identity.role === 'viewer') throw ApiError.permissionDenied('Viewers cannot connect accounts.');
    const body = await validateDto(StartConnectionFlowDto, request.body ?? {});
    const origin = this.publicOrigin(request);
    // One flow cookie per browser, reused by its later flows, so two tabs' flows do not cancel each other.
    const browser = flowCookieOf(request) ?? randomSecret();
    const started = await this.flows.start(slug, identity, body.return_to, origin, browser);
    const secure = origin.startsWith('https:') ? '; Secure' : '';
    void reply.header(
      'set-cookie',
      `${FLOW_COOKIE}=${browser}; Path=/oauth/connections/; Max-Age=${FLOW_LIFETIME_MS / 1000}; HttpOnly; SameSite=Lax${secure}`,
    );
    return started;
  }

  @Get(':platform/callback')
  @PublicLimitedByIp()
  @PLATFORM_PARAM
  @ApiOperation({
    summary: 'OAuth callback of a connection flow',
    description:
      'Where Google or Meta sends the browser back. No credential: the state names the user, workspace and platform. ' +
      'Always answers 302 to the web interface page the flow started from, with `platform` and either `connected=N` ' +
      '(connections created or refreshed) or `error=` one of `access_denied`, `invalid_state`, `expired_state`, ' +
      '`browser_mismatch` (the callback came back in another browser than the one that started the flow), `missing_code`, ' +
      '`invalid_code`, `scope_missing`, `no_accounts`, `permission_denied`, `provider_unavailable`, `provider_error`, ' +
      '`invalid_grant`, `temporarily_unavailable`, `server_error`.',
  })
  @ApiQuery({ name: 'code', required: false, schema: { type: 'string', maxLength: 4096 } })
  @ApiQuery({ name: 'state', required: false, schema: { type: 'string', maxLength: 128, pattern: RANDOM_SECRET_PATTERN } })
  @ApiQuery({
    name: 'error',
    required: false,
    schema: { type: 'string', maxLength: 256 },
    description: 'Sent by the provider when consent was refused.',
  })
  @ApiResponse({
    status: 302,
    description: 'To the web interface, with the outcome in the query.',
    headers: {
      Location: {
        description: 'e.g. `https://api.example.com/app/connections?platform=google_ads&connected=2`',
        schema: { type: 'string', format: 'uri', maxLength: 4096 },
      },
    },
  })
  @ApiProblem(404, 'Unknown platform (`not_found`).')
  async callback(@Param('platform') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (platformOfSlug(slug) === undefined) throw ApiError.notFound();
    const fallback = `${this.publicOrigin(request)}${DEFAULT_RETURN_TO}`;
    const location = await this.flows.callback(slug, request.query as Record<string, unknown>, fallback, flowCookieOf(request));
    await reply.redirect(location, 302);
  }

  /**
   * Where this service is reached: PUBLIC_BASE_URL (path prefix included), which production
   * requires when an ad platform is configured; else the request's Host when ALLOWED_HOSTS has it.
   */
  private publicOrigin(request: FastifyRequest): string {
    return this.config.publicBaseUrl ?? requestUrl(request, this.config).origin;
  }
}
