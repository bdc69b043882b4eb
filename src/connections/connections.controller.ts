import { Body, Controller, Delete, Get, HttpCode, Param, Patch } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ApiProblem, ApiProblems } from '../common/errors/problem-details.schema.js';
import { ConnectionsService } from './connections.service.js';
import { ListConnectionsQuery } from './dto/list-connections.query.js';
import { ConnectionDto, UpdateConnectionDto } from './dto/connection.dto.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { CurrentIdentity } from '../common/access/current-identity.decorator.js';
import type { Identity } from '../common/access/identity.js';

/**
 * Deliberately no POST: a connection needs an OAuth grant, which only the web interface's flow
 * can obtain (SPEC section 6), so the router answers POST with 405 and `Allow: GET, HEAD`.
 */
@ApiTags('connections')
@Controller('api/v1/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

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
  @ApiList(ConnectionDto, ListConnectionsQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListConnectionsQuery, @PageLinks() links: URL) {
    return this.connections.list(query, links);
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
    summary: 'Update a connection',
    description:
      "Renames it (`account_name`) and, on a Google connection, records whether your organisation accepts Google's Customer " +
      'Match terms (`customer_match_terms_accepted`, admins only: an editor or an API key changing it → 403 ' +
      '`permission_denied`; `true` on a Meta connection → 400). A value sent unchanged is accepted from anyone who may write. ' +
      'The other fields are set by the OAuth flow and ignored in the body.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: ConnectionDto, description: 'The connection as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  @ApiProblem(
    403,
    'A viewer or a read-only API key trying to write, or anyone but an admin changing `customer_match_terms_accepted` (`permission_denied`).',
  )
  partialUpdate(
    @Param('id', IdPipe) id: number,
    @Body() body: UpdateConnectionDto,
    @CurrentIdentity() identity: Identity,
  ): Promise<ConnectionDto> {
    return this.connections.update(id, body, identity);
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
