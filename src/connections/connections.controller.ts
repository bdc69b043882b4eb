import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Query, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { IdPipe } from '../common/http/id-param.js';
import type { Query as QueryString } from '../common/http/query-filters.js';
import { parseConnectionFilters } from './connection-filters.js';
import { ApiList, requestUrl } from '../common/pagination/list-endpoint.js';
import { parsePageRequest } from '../common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../common/tenancy/tenant-repository.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ApiProblems } from '../openapi/problem-details.schema.js';
import { CONNECTION_STATUSES, PLATFORMS } from './connection.entity.js';
import { ConnectionsService } from './connections.service.js';
import { ConnectionDto, UpdateConnectionDto } from './dto/connection.dto.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

/**
 * Deliberately no POST: a connection needs an OAuth grant, which only the web interface's flow
 * can obtain (SPEC section 6), so the router answers POST with 405 and `Allow: GET, HEAD`.
 */
@ApiTags('connections')
@Controller('api/v1/connections')
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List connections',
    description:
      'Authorised links to Google Ads and Meta Ads accounts of your workspace, newest first by default. ' +
      'Connections cannot be created through this API (`POST` answers 405 `method_not_allowed` with `Allow: GET, HEAD`): ' +
      'an admin or editor creates them with the OAuth flow of the web interface ' +
      '(`POST /oauth/connections/{google-ads|meta-ads}/start`), and an operator can register an externally managed one ' +
      'with `audience-admin connection create`. OAuth tokens are encrypted at rest and never returned. ' +
      '`ordering=name` sorts by `account_name`.',
  })
  @ApiList(ConnectionDto, [
    { name: 'customer', description: 'Workspace id; any other than yours gives an empty page.', schema: ID_SCHEMA },
    { name: 'platform', description: 'Only this ad platform.', schema: { type: 'string', enum: [...PLATFORMS] } },
    { name: 'status', description: 'Only this status.', schema: { type: 'string', enum: [...CONNECTION_STATUSES] } },
  ])
  @ApiProblems(400, 404)
  list(@Query() query: QueryString, @Req() request: FastifyRequest) {
    const page = parsePageRequest(query, { orderingFields: ORDERING_FIELDS });
    return this.connections.list(parseConnectionFilters(query), page, requestUrl(request, this.config));
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a connection',
    description: 'One ad-account connection of your workspace: status, `status_reason`, scopes and token times; never a token.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: ConnectionDto, description: 'The connection.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<ConnectionDto> {
    return this.connections.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Rename a connection',
    description: 'Only `account_name` can change; the other fields are set by the OAuth flow and ignored in the body.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: ConnectionDto, description: 'The connection as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateConnectionDto): Promise<ConnectionDto> {
    return this.connections.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a connection',
    description:
      'Revokes the grant at the ad platform (best effort: a provider that fails or does not answer in time does not block the ' +
      'deletion), then removes the connection: signals that used it lose it and the active ones are paused, and audiences ' +
      'stop sending to it.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(404)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.connections.delete(id);
  }
}
