import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { PersonDto } from '../people/dto/person.dto.js';
import { MAX_BATCH_PEOPLE } from '../people/person-write.js';
import { ListMembersQuery } from './dto/list-members.query.js';
import { ChangeMembersDto, MembersChangedDto } from './dto/members.dto.js';
import { MembershipsService } from './memberships.service.js';

@ApiTags('audiences')
@Controller('api/v1/audiences/:id/members')
export class AudienceMembersController {
  constructor(private readonly memberships: MembershipsService) {}

  @Get()
  @ApiOperation({
    summary: 'List an audience’s members',
    description:
      'The members as people, as of the audience’s `members_updated_at` (SPEC 10.2). Rules and model audiences are recomputed by jobs after their inputs change; upload audiences change with each upload.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiList(PersonDto, ListMembersQuery)
  @ApiProblems(400, 404)
  list(@Param('id', IdPipe) id: number, @ListQuery() query: ListMembersQuery, @PageLinks() links: URL) {
    return this.memberships.list(id, query, links);
  }

  @Post()
  // As the people batch: 1,000 rows of a few keys, each with up to 100 traits and 9 identifiers.
  @RouteConfig({ maxJsonKeys: MAX_BATCH_PEOPLE * 120 })
  @HttpCode(200)
  @Idempotent(200)
  @ApiOperation({
    summary: 'Add or remove members of an upload audience',
    description:
      '`add` upserts the rows as people (as `POST /api/v1/people/batch/` does) and makes them members; `remove` takes the people the rows name out. Rows with errors come back in `rejected`; the others are applied in one transaction. ' +
      'A rules or model audience computes its members: 409. An archived audience is frozen: 409.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: MembersChangedDto, description: 'How many people joined and left, and the rows rejected.' })
  @ApiProblems(400, 404, 409, 413, 415)
  change(@Param('id', IdPipe) id: number, @Body() body: ChangeMembersDto): Promise<MembersChangedDto> {
    return this.memberships.change(id, body);
  }
}
