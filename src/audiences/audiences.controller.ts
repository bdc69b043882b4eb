import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { IdPipe } from '../common/http/id-param.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { AudiencesService } from './audiences.service.js';
import { ListAudiencesQuery } from './dto/list-audiences.query.js';
import { AudienceDetailDto, AudienceDto, CREATE_AUDIENCE_EXAMPLES, CreateAudienceDto, UpdateAudienceDto } from './dto/audience.dto.js';
import { ApiCreateExamples } from '../openapi/create-examples.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('audiences')
@Controller('api/v1/audiences')
export class AudiencesController {
  constructor(private readonly audiences: AudiencesService) {}

  @Get()
  @ApiOperation({ summary: 'List audiences', description: 'Audiences of your workspace, newest first by default.' })
  @ApiList(AudienceDto, ListAudiencesQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListAudiencesQuery, @PageLinks() links: URL) {
    return this.audiences.list(query, links);
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Create an audience',
    description:
      'A new audience in your workspace, status `draft`. `model_instance` is required when `source_type` is `model`; references must be objects of your workspace. Names are unique per workspace, ignoring case.',
  })
  @ApiCreateExamples(CreateAudienceDto, AudienceDetailDto, 'The new audience.', CREATE_AUDIENCE_EXAMPLES)
  @ApiProblems(400, 413, 415)
  create(@Body() body: CreateAudienceDto): Promise<AudienceDetailDto> {
    return this.audiences.create(body);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get an audience',
    description: 'One audience of your workspace; another workspace’s id answers 404 like one that does not exist.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AudienceDetailDto, description: 'The audience with its destinations.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<AudienceDetailDto> {
    return this.audiences.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update an audience',
    description:
      'Changes the fields given. An archived audience cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AudienceDetailDto, description: 'The audience as it is now, with its destinations.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateAudienceDto): Promise<AudienceDetailDto> {
    return this.audiences.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an audience', description: 'Refused with 409 while a signal uses the audience.' })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(404, 409)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.audiences.delete(id);
  }
}
