import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { Personal } from '../common/access/access.decorators.js';
import type { Identity } from '../common/access/identity.js';
import { ApiError } from '../common/errors/api-error.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks, PagedQuery } from '../common/pagination/list-query.js';
import { CurrentIdentity } from '../common/access/current-identity.decorator.js';
import { ID_SCHEMA, IntegerField, RequiredString } from '../common/validation/fields.js';
import { ApiProblem, ApiProblems } from '../common/errors/problem-details.schema.js';
import { DEFAULT_LIFETIME_DAYS, MAX_LIFETIME_DAYS, McpTokensService } from './mcp-tokens.service.js';

/** `GET /api/v1/mcp-tokens/`: a page of the caller's own tokens, without filters. */
export class ListMcpTokensQuery extends PagedQuery {
  /** Tokens have no status and are never updated. */
  static override readonly orderingFields = ['id', 'name', 'created_at'] as const;
}

export class CreateMcpTokenDto {
  @ApiProperty({ example: 'Claude Desktop on my laptop' })
  @RequiredString({ max: 255 })
  name: string;

  @ApiPropertyOptional({ default: DEFAULT_LIFETIME_DAYS, example: 30 })
  @IntegerField({ min: 1, max: MAX_LIFETIME_DAYS, optional: true })
  expires_in_days?: number;
}

export class McpTokenDto {
  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  id: number;

  @ApiProperty({ example: 'Claude Desktop on my laptop' })
  name: string;

  @ApiProperty({
    pattern: '^[a-z0-9]{12}$',
    minLength: 12,
    maxLength: 12,
    example: 'k3x9a0b1c2d3',
    description: 'Public part of the token, to recognise it; not a secret.',
  })
  prefix: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2027-02-19T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ format: 'date-time', nullable: true, example: null, type: 'string' })
  last_used_at: string | null;
}

export class CreatedMcpTokenDto extends McpTokenDto {
  @ApiProperty({
    // mcp-token-format.ts: `mcp_`, a 12-character prefix, `_`, 43 characters of base64url.
    pattern: '^mcp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$',
    minLength: 60,
    maxLength: 60,
    example: 'mcp_k3x9a0b1c2d3_3q2Jx0cV7m1Wq0bY2d3f4g5h6j7k8l9z0x1c2v3b4n5',
    description: 'The secret token, shown only in this response. Send it as `Authorization: Bearer <token>` to /mcp.',
  })
  token: string;
}

/** A user's own MCP tokens (SPEC section 2); JWT only, every role, an API key → 403. */
@ApiTags('mcp-tokens')
@Controller('api/v1/mcp-tokens')
@Personal()
export class McpTokensController {
  constructor(private readonly tokens: McpTokensService) {}

  @Get()
  @ApiOperation({
    summary: 'List my MCP tokens',
    description: 'Your own tokens that are not revoked (expired ones included), never their secrets.',
  })
  @ApiList(McpTokenDto, ListMcpTokensQuery)
  @ApiProblems(400, 404)
  list(@CurrentIdentity() identity: Identity, @ListQuery() query: ListMcpTokensQuery, @PageLinks() links: URL) {
    return this.tokens.list(owner(identity), query.page, links);
  }

  @Post()
  @ApiOperation({
    summary: 'Create an MCP token',
    description: `Creates a personal token for AI agents on /mcp. It acts as you (your workspace, your role). Lifetime ${DEFAULT_LIFETIME_DAYS} days by default, 1 to ${MAX_LIFETIME_DAYS}. The secret is in this response only.`,
  })
  @ApiCreatedResponse({ type: CreatedMcpTokenDto, description: 'The new token, with its secret (shown this once).' })
  @ApiProblems(400, 413, 415)
  @ApiProblem(409, 'You already hold the most usable tokens allowed (MCP_TOKENS_PER_USER, 25 by default): revoke one first.')
  create(@CurrentIdentity() identity: Identity, @Body() body: CreateMcpTokenDto): Promise<CreatedMcpTokenDto> {
    return this.tokens.create(owner(identity), body.name, body.expires_in_days);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an MCP token', description: 'The token stops working at once. Another user’s token answers 404.' })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiProblems(404)
  destroy(@CurrentIdentity() identity: Identity, @Param('id', IdPipe) id: number): Promise<void> {
    return this.tokens.revoke(owner(identity), id);
  }
}

function owner(identity: Identity): { userId: number; customerId: number } {
  if (identity.kind !== 'user') throw ApiError.permissionDenied('This endpoint is for users; an API key cannot use it.');
  return { userId: identity.userId, customerId: identity.customerId };
}
