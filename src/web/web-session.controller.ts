import { Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicLimitedByIp, PublicOrPersonal } from '../common/access/access.decorators.js';
import { PublicCountingFailures } from '../auth/authentication-failures.interceptor.js';
import { TokenObtainDto } from '../auth/dto/jwt.dto.js';
import { LoginService } from '../auth/login.service.js';
import { SessionsService } from '../auth/sessions.service.js';
import { SocialLoginDto } from '../auth/social/dto/social-login.dto.js';
import { SOCIAL_PROVIDERS, SocialProviders } from '../auth/social/social-providers.js';
import { SocialLoginService } from '../auth/social/social-login.service.js';
import type { TokenPair } from '../auth/tokens/token.service.js';
import { TokenService } from '../auth/tokens/token.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { AdPlatformClients } from '../connections/oauth/ad-platform-clients.js';
import { validateDto } from '../common/validation/validate-dto.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ApiProblem } from '../common/errors/problem-details.schema.js';
import { WebConfigDto, WebSessionDto } from './dto/web-session.dto.js';
import { assertSameOriginCall, clearSessionCookie, SESSION_COOKIE, sessionCookieOf, setSessionCookie } from './session-cookie.js';

const SAME_ORIGIN_HEADER = ApiHeader({
  name: 'X-Requested-With',
  required: true,
  description: 'Any value. A cross-site form cannot send it, so a page of another site cannot drive these calls.',
  schema: { type: 'string', maxLength: 64, example: 'fetch' },
});
const FORGERY = ApiProblem(403, 'No `X-Requested-With` header, or `Sec-Fetch-Site` names another site (`permission_denied`).', {
  detail: 'Session calls must carry an X-Requested-With header.',
});
const COOKIE_SET = {
  'Set-Cookie': {
    description: `\`${SESSION_COOKIE}\`: the refresh token, HttpOnly, SameSite=Strict, Path=/app/session/ (Secure over https).`,
    schema: { type: 'string', maxLength: 4096, pattern: `^${SESSION_COOKIE}=` },
  },
};

/**
 * The web interface's session (docs/architecture.md): the same logins as `/api/v1/jwt/` and
 * `/api/v1/auth/o/`, but the refresh token goes into an HttpOnly cookie instead of the body, and
 * only the access token reaches the page's JavaScript.
 */
@ApiTags('web-session')
// The web interface's own endpoints: documented for completeness, marked internal so that client
// generators (openapi-generator and orval honour x-internal) leave them out of generated SDKs.
@ApiExtension('x-internal', true)
@Controller('app/session')
export class WebSessionController {
  constructor(
    private readonly login: LoginService,
    private readonly sessions: SessionsService,
    private readonly social: SocialLoginService,
    private readonly tokens: TokenService,
    private readonly socialProviders: SocialProviders,
    private readonly adPlatforms: AdPlatformClients,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('config')
  @PublicLimitedByIp()
  @ApiOperation({ summary: 'What the web interface can offer', description: 'The configured social-login providers and ad platforms.' })
  @ApiOkResponse({ type: WebConfigDto, description: 'The sign-in and connect options of this server.' })
  configuration(): WebConfigDto {
    return { social_providers: this.socialProviders.names(), ad_platforms: this.adPlatforms.slugs() };
  }

  @Post('login')
  @HttpCode(200)
  @PublicLimitedByIp()
  @SAME_ORIGIN_HEADER
  @ApiOperation({
    summary: 'Sign in to the web interface',
    description:
      'As `POST /api/v1/jwt/create/` (same throttling, same 401 for every failure), but the refresh token is set as the session cookie.',
  })
  @ApiBody({ type: TokenObtainDto })
  @ApiResponse({ status: 200, type: WebSessionDto, description: 'Signed in; the session cookie is set.', headers: COOKIE_SET })
  @ApiProblem(400, 'Missing or blank `email` or `password` (`validation_error`).', { errors: { email: ['This field is required.'] } })
  @ApiProblem(401, 'Wrong email or password, or an inactive user (`authentication_failed`).', {
    code: 'authentication_failed',
    detail: 'No active account found with the given credentials.',
  })
  @FORGERY
  async signIn(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<WebSessionDto> {
    assertSameOriginCall(request);
    const body = await validateDto(TokenObtainDto, request.body ?? {});
    return this.answer(request, reply, await this.login.login(body.email, body.password, request.ip), { replaces: true });
  }

  @Post('refresh')
  @HttpCode(200)
  @PublicCountingFailures()
  @SAME_ORIGIN_HEADER
  @ApiOperation({
    summary: 'Renew the access token',
    description:
      'Spends the refresh token in the session cookie and sets its successor (rotation with reuse detection, as `/api/v1/jwt/refresh/`).',
  })
  @ApiBody({ required: false, description: 'No body.', schema: { type: 'object', additionalProperties: false } })
  @ApiResponse({
    status: 200,
    type: WebSessionDto,
    description: 'A new access token; the cookie holds the next refresh token.',
    headers: COOKIE_SET,
  })
  @ApiProblem(400, 'A body was sent and it is not valid JSON (`parse_error`).')
  @ApiProblem(
    401,
    'No session cookie (`not_authenticated`), or its token is spent, expired or ended (`token_not_valid`); the cookie is cleared.',
    {
      code: 'token_not_valid',
      detail: 'Token is invalid or expired.',
    },
  )
  @FORGERY
  async refresh(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<WebSessionDto> {
    assertSameOriginCall(request);
    const refresh = sessionCookieOf(request);
    if (refresh === undefined)
      throw new ApiError(401, 'not_authenticated', 'Not signed in.', undefined, { 'www-authenticate': 'Bearer realm="api"' });
    try {
      return await this.answer(request, reply, await this.sessions.refresh(refresh));
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 401) clearSessionCookie(reply, this.secure(request));
      throw error;
    }
  }

  @Post('logout')
  @HttpCode(204)
  @PublicLimitedByIp()
  @SAME_ORIGIN_HEADER
  @ApiOperation({
    summary: 'Sign out of the web interface',
    description:
      'Ends the session of the cookie’s refresh token (its access tokens stop working too) and clears the cookie. Without a valid cookie it only clears it.',
  })
  @ApiBody({ required: false, description: 'No body.', schema: { type: 'object', additionalProperties: false } })
  @ApiResponse({ status: 204, description: 'Signed out; the cookie is cleared.', headers: COOKIE_SET })
  @ApiProblem(400, 'A body was sent and it is not valid JSON (`parse_error`).')
  @FORGERY
  async logout(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    assertSameOriginCall(request);
    const refresh = sessionCookieOf(request);
    const claims = refresh === undefined ? null : this.tokens.verify(refresh, 'refresh');
    if (claims) await this.sessions.end(claims.sid, 'logout');
    clearSessionCookie(reply, this.secure(request));
  }

  @Post('social/:provider')
  @HttpCode(200)
  @PublicOrPersonal()
  @SAME_ORIGIN_HEADER
  @ApiParam({ name: 'provider', enum: SOCIAL_PROVIDERS, description: 'A configured provider; one that is not configured answers 404.' })
  @ApiOperation({
    summary: 'Finish a social sign-in in the web interface',
    description:
      'As `POST /api/v1/auth/o/{provider}/` with a JSON body (the same checks, throttling and linking with `Authorization: Bearer`), ' +
      'but the new session’s refresh token is set as the session cookie.',
  })
  @ApiBody({ type: SocialLoginDto })
  @ApiResponse({ status: 200, type: WebSessionDto, description: 'Signed in (or linked); the session cookie is set.', headers: COOKIE_SET })
  @ApiProblem(400, 'Unknown, used or expired `state`, a wrong `iss`, or a refused code (`validation_error`).', {
    errors: { state: ['Unknown or already used state; start the login again.'] },
  })
  @ApiProblem(401, 'No active user for this identity, or an ID token that failed verification (`authentication_failed`).', {
    code: 'authentication_failed',
    detail: 'No active account found with the given credentials.',
  })
  @ApiProblem(404, 'The provider is unknown or not configured (`not_found`).', {
    detail: 'No social login provider "github" is configured.',
  })
  @ApiProblem(409, 'Linking: this provider account is already linked to another user (`conflict`).', {
    detail: 'This Google account is already linked to another user.',
  })
  @ApiProblem(503, 'The provider could not be reached (`service_unavailable`, `Retry-After`).', {
    detail: 'Google could not be reached. Try again shortly.',
  })
  @FORGERY
  async socialSignIn(
    @Param('provider') provider: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebSessionDto> {
    assertSameOriginCall(request);
    this.social.assertConfigured(provider);
    const callback = await validateDto(SocialLoginDto, request.body ?? {});
    const result = await this.social.finish(provider, callback, request.ip, request.identity);
    return this.answer(request, reply, result, { replaces: true });
  }

  /**
   * Sets the cookie and answers the access token. A new login (`replaces`) ends the session the
   * browser's cookie held before, if any: once its cookie is overwritten nothing could end it.
   */
  private async answer(request: FastifyRequest, reply: FastifyReply, pair: TokenPair, { replaces = false } = {}): Promise<WebSessionDto> {
    if (replaces) {
      const previous = sessionCookieOf(request);
      const claims = previous === undefined ? null : this.tokens.verify(previous, 'refresh');
      if (claims && claims.sid !== this.tokens.verify(pair.refresh, 'refresh')?.sid) await this.sessions.end(claims.sid, 'logout');
    }
    setSessionCookie(reply, pair.refresh, this.config.jwtRefreshTtlSeconds, this.secure(request));
    return { access: pair.access, expires_in: this.config.jwtAccessTtlSeconds };
  }

  /** Secure cookies when the browser reaches the service over https (PUBLIC_BASE_URL, or a trusted proxy's X-Forwarded-Proto). */
  private secure(request: FastifyRequest): boolean {
    return this.config.publicBaseUrl?.startsWith('https:') ?? request.protocol === 'https';
  }
}
