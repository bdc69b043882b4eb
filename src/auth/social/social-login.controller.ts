import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../common/errors/api-error.js';
import { RANDOM_SECRET_PATTERN } from '../../common/crypto/secret-hash.js';
import { validateDto } from '../../common/validation/validate-dto.js';
import { ApiProblem } from '../../common/errors/problem-details.schema.js';
import { PublicOrPersonal } from '../../common/access/access.decorators.js';
import { AuthorizationUrlDto, SocialLoginDto, SocialLoginResultDto, SocialLoginStartQuery } from './dto/social-login.dto.js';
import { SOCIAL_PROVIDERS } from './social-providers.js';
import { SocialLoginService } from './social-login.service.js';

/** The callback fields read from the query string; other parameters of a provider's callback (scope, authuser…) are ignored. */
const CALLBACK_FIELDS = ['code', 'state', 'iss', 'redirect_uri', 'error', 'error_description'] as const;

const NOT_CONFIGURED = { detail: 'No social login provider "github" is configured.' };

const PROVIDER_PARAM = ApiParam({
  name: 'provider',
  enum: SOCIAL_PROVIDERS,
  description: 'A configured provider; one that is not configured answers 404.',
});

/** djoser's social endpoints (SPEC section 2): `/api/v1/auth/o/{provider}/`. */
@ApiTags('auth')
@Controller('api/v1/auth/o')
export class SocialLoginController {
  constructor(private readonly social: SocialLoginService) {}

  @Get(':provider')
  // With an access token, the flow links an account to that user (and only they can finish it).
  @PublicOrPersonal()
  @PROVIDER_PARAM
  @ApiOperation({
    summary: 'Start a social login',
    description:
      'Returns the URL to send the browser to. The state in it is single use, valid for 10 minutes and bound to the provider, ' +
      'the redirect URI, a PKCE verifier and (Google) a nonce, all kept server-side: no cookie is needed. ' +
      'Sent with `Authorization: Bearer <access>`, the flow links the provider account to that user instead of signing in, ' +
      'and only a POST with that user’s token can finish it.',
  })
  @ApiOkResponse({ type: AuthorizationUrlDto, description: 'The provider’s authorization URL.' })
  @ApiProblem(400, '`redirect_uri` missing or not on the allow-list (`validation_error` under `errors.redirect_uri`).', {
    errors: { redirect_uri: ['This redirect URI is not in SOCIAL_AUTH_ALLOWED_REDIRECT_URIS.'] },
  })
  @ApiProblem(404, 'The provider is unknown or not configured (`not_found`).', NOT_CONFIGURED)
  @ApiProblem(503, 'Google’s discovery document could not be read, or the database is down (`service_unavailable`).', {
    detail: 'Google could not be reached. Try again shortly.',
  })
  @ApiQuery({
    name: 'redirect_uri',
    required: true,
    schema: { type: 'string', format: 'uri', minLength: 1, maxLength: 2048 },
    description: 'Where the provider sends the browser back; one of SOCIAL_AUTH_ALLOWED_REDIRECT_URIS, exactly.',
    example: 'https://app.example.com/auth/callback/google',
  })
  async start(@Param('provider') provider: string, @Req() request: FastifyRequest): Promise<AuthorizationUrlDto> {
    // An unknown provider is a 404 whatever the query says.
    this.social.assertConfigured(provider);
    // Unknown query parameters are ignored, as on every other route (SPEC section 4).
    const { redirect_uri } = (request.query ?? {}) as Record<string, unknown>;
    const query = await validateDto(SocialLoginStartQuery, { redirect_uri });
    return this.social.start(provider, query.redirect_uri, request.identity);
  }

  @Post(':provider')
  @HttpCode(201)
  @PublicOrPersonal()
  // Form bodies are taken here and nowhere else (json-body-parser.ts).
  @RouteConfig({ formBody: true })
  @PROVIDER_PARAM
  @ApiOperation({
    summary: 'Finish a social login, or link a provider account',
    description:
      'Takes the `code` and `state` of the provider’s callback from a JSON body, a form body or the query string and answers ' +
      'with tokens of an ordinary session. The identity maps to an existing active user: by an earlier link, else (Google, or Facebook ' +
      'with FACEBOOK_TRUST_EMAIL) by verified email, linked on first use; nobody is created. With `Authorization: Bearer <access>` the ' +
      'provider account is linked to that user instead. Failed attempts count per client IP like password logins.',
  })
  @ApiConsumes('application/json', 'application/x-www-form-urlencoded')
  @ApiExtraModels(SocialLoginDto)
  @ApiBody({
    required: false,
    schema: { $ref: getSchemaPath(SocialLoginDto) },
    description: 'Or send the same fields in the query string.',
  })
  @ApiQuery({ name: 'code', required: false, schema: { type: 'string', maxLength: 4096 }, description: 'As in the body.' })
  @ApiQuery({
    name: 'state',
    required: false,
    schema: { type: 'string', maxLength: 128, pattern: RANDOM_SECRET_PATTERN },
    description: 'As in the body.',
  })
  @ApiQuery({ name: 'iss', required: false, schema: { type: 'string', format: 'uri', maxLength: 2048 }, description: 'As in the body.' })
  @ApiCreatedResponse({ type: SocialLoginResultDto, description: 'Signed in (or linked): a new session’s tokens and the user.' })
  @ApiProblem(
    400,
    'Unknown, used, expired or mismatched `state`, or a wrong `iss` (`validation_error` under `errors.state` / `errors.iss`); the provider ' +
      'refused the code or consent was denied (under `errors.code`).',
    { errors: { state: ['Unknown or already used state; start the login again.'] } },
  )
  @ApiProblem(
    401,
    'No active user for this identity, an unverified Google email, or an ID token that failed verification (`authentication_failed`); ' +
      'with an Authorization header: not a valid access token (`authentication_failed`, `token_not_valid`).',
    { code: 'authentication_failed', detail: 'No active account found with the given credentials.' },
  )
  @ApiProblem(404, 'The provider is unknown or not configured (`not_found`).', NOT_CONFIGURED)
  @ApiProblem(409, 'Linking: this provider account is already linked to another user (`conflict`).', {
    detail: 'This Google account is already linked to another user.',
  })
  @ApiProblem(503, 'The provider could not be reached, or the database is down (`service_unavailable`, `Retry-After`).', {
    detail: 'Facebook could not be reached. Try again shortly.',
  })
  @ApiProblem(415, 'The body is neither JSON nor a form (`unsupported_media_type`).')
  async finish(@Param('provider') provider: string, @Req() request: FastifyRequest): Promise<SocialLoginResultDto> {
    this.social.assertConfigured(provider);
    const query = request.query as Record<string, unknown>;
    const fromQuery = Object.fromEntries(CALLBACK_FIELDS.filter((name) => query[name] !== undefined).map((name) => [name, query[name]]));
    const body: unknown = request.body ?? {};
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw ApiError.validation({ non_field_errors: ['Expected a JSON object.'] });
    const callback = await validateDto(SocialLoginDto, { ...fromQuery, ...body });
    return this.social.finish(provider, callback, request.ip, request.identity);
  }
}
