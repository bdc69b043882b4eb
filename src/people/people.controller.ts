import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ListPeopleQuery } from './dto/list-people.query.js';
import { BatchPeopleDto, BatchResultDto, PersonDto, UpdatePersonDto } from './dto/person.dto.js';
import { MAX_BATCH_PEOPLE } from './person-write.js';
import { PeopleService } from './people.service.js';

/**
 * `:id` only matches digits: `/people/batch/` is a path of its own (POST), so a GET, PATCH or
 * DELETE there is a 405 with `Allow: POST` rather than a lookup of a person called "batch".
 * The swagger plugin strips the `(^…)` pattern, so the document still says `{id}`.
 */
const PERSON = ':id(^\\d+$)';

@ApiTags('people')
@Controller('api/v1/people')
export class PeopleController {
  constructor(private readonly people: PeopleService) {}

  @Get()
  @ApiOperation({
    summary: 'List people',
    description: 'People of your workspace, newest first by default. Identifiers are never returned, only which kinds of key a person has.',
  })
  @ApiList(PersonDto, ListPeopleQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListPeopleQuery, @PageLinks() links: URL) {
    return this.people.list(query, links);
  }

  @Post('batch')
  // A full batch is 1,000 objects of a few keys each; a row may carry up to 100 traits and 9
  // identifiers besides its own fields. No one object may still have more than 1,000 keys.
  @RouteConfig({ maxJsonKeys: MAX_BATCH_PEOPLE * 120 })
  @HttpCode(200)
  @Idempotent(200)
  @ApiOperation({
    summary: 'Upsert people in a batch',
    description:
      'Up to 1,000 people, upserted by `external_id` in one transaction. Identifiers are normalised and hashed on arrival; the raw values are never stored. ' +
      'Rows with errors are returned in `rejected` with their index and error codes; the other rows are applied. More than 1,000 rows is a 400.',
  })
  @ApiOkResponse({ type: BatchResultDto, description: 'How many people were created and updated, and the rows rejected.' })
  @ApiProblems(400, 413, 415)
  batch(@Body() body: BatchPeopleDto): Promise<BatchResultDto> {
    return this.people.batch(body.people);
  }

  @Get(PERSON)
  @ApiOperation({
    summary: 'Get a person',
    description: 'One person of your workspace; another workspace’s id answers 404 like one that does not exist.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: PersonDto, description: 'The person.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<PersonDto> {
    return this.people.get(id);
  }

  @Patch(PERSON)
  @ApiOperation({
    summary: 'Update a person',
    description:
      'Changes what the body names: traits are merged (`null` removes a key), consent per key, and the identifiers named replace the stored ones of their kind. ' +
      'A bad field is a 400 with the same error codes a batch row gets, under the field path.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: PersonDto, description: 'The person as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdatePersonDto): Promise<PersonDto> {
    return this.people.update(id, body);
  }

  @Delete(PERSON)
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase a person',
    description:
      'Erasure: the person and every hash of them are deleted at once. The next sync to each destination removes them there; after that nothing of them is left.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Erased.' })
  @ApiProblems(404)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.people.erase(id);
  }
}
