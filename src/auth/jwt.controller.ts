import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { ApiProblem, ApiProblems } from '../common/errors/problem-details.schema.js';
import { Personal, PublicLimitedByIp } from '../common/access/access.decorators.js';
import { PublicCountingFailures } from './authentication-failures.interceptor.js';
import { EmptyDto, TokenObtainDto, TokenPairDto, TokenRefreshDto, TokenVerifyDto } from './dto/jwt.dto.js';
import { LoginService } from './login.service.js';
import { SessionsService, tokenNotValid } from './sessions.service.js';

/** The djoser / simplejwt-compatible token endpoints of SPEC section 2. */
@ApiTags('auth')
@Controller('api/v1/jwt')
export class JwtController {
  constructor(
    private readonly login: LoginService,
    private readonly sessions: SessionsService,
  ) {}

  @Post('create')
  @HttpCode(200)
  @PublicLimitedByIp()
  @ApiOperation({
    summary: 'Log in',
    description:
      'Exchanges an email and password for an access and a refresh token. Wrong email, wrong password and an inactive user ' +
      'all answer the same 401 `authentication_failed`. Failed attempts are limited per email and per client IP (429 `throttled` with `Retry-After`).',
  })
  @ApiOkResponse({ type: TokenPairDto, description: 'A new access and refresh token pair.' })
  @ApiProblems(400, 401, 415)
  async create(@Body() body: TokenObtainDto, @Req() request: FastifyRequest): Promise<TokenPairDto> {
    return this.login.login(body.email, body.password, request.ip);
  }

  @Post('refresh')
  @HttpCode(200)
  @PublicCountingFailures()
  @ApiOperation({
    summary: 'Refresh the token pair',
    description:
      'Spends a refresh token and returns a new access and refresh token (rotation). Presenting a refresh token that was already ' +
      'spent ends its whole session: every token of that login stops working (reuse detection).',
  })
  @ApiOkResponse({ type: TokenPairDto, description: 'A new pair; the refresh token sent is spent.' })
  @ApiProblems(400, 401, 415)
  async refresh(@Body() body: TokenRefreshDto): Promise<TokenPairDto> {
    return this.sessions.refresh(body.refresh);
  }

  @Post('verify')
  @HttpCode(200)
  @PublicCountingFailures()
  @ApiOperation({
    summary: 'Verify a token',
    description:
      'Answers 200 `{}` when the access or refresh token is valid now (signature, expiry, session not ended), else 401 `token_not_valid`.',
  })
  @ApiOkResponse({ description: 'The token is valid.', type: EmptyDto })
  @ApiProblems(400, 401, 415)
  async verify(@Body() body: TokenVerifyDto): Promise<Record<string, never>> {
    if (!(await this.sessions.isValid(body.token))) throw tokenNotValid();
    return {};
  }

  @Post('logout')
  @HttpCode(204)
  @Personal()
  @ApiOperation({
    summary: 'Log out',
    description: 'Ends the session of the access token in the Authorization header: its refresh token and that access token stop working.',
  })
  @ApiBody({ required: false, description: 'No body.', schema: { type: 'object' } })
  @ApiResponse({ status: 204, description: 'Logged out.' })
  // 413 and 415 are the document builder's, as on every operation with a body (openapi.ts).
  @ApiProblem(400, 'A body was sent and it is not valid JSON (`parse_error`); send none.')
  async logout(@Req() request: FastifyRequest): Promise<void> {
    const identity = request.identity;
    if (identity?.kind !== 'user') throw ApiError.permissionDenied();
    await this.sessions.end(identity.sessionId, 'logout');
  }
}
