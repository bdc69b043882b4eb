import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { IdPipe } from '../common/http/id-param.js';
import { Idempotent } from '../common/idempotency/idempotent.decorator.js';
import type { Query as QueryString } from '../common/http/query-filters.js';
import { ApiList, requestUrl } from '../common/pagination/list-endpoint.js';
import { parsePageRequest } from '../common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../common/tenancy/tenant-repository.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ApiProblems } from '../openapi/problem-details.schema.js';
import { AUDIENCE_STATUSES, SOURCE_TYPES } from './audience.entity.js';
import { parseAudienceFilters } from './audience-filters.js';
import { AudiencesService } from './audiences.service.js';
import { AudienceDto, CreateAudienceDto, UpdateAudienceDto } from './dto/audience.dto.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('audiences')
@Controller('api/v1/audiences')
export class AudiencesController {
  constructor(
    private readonly audiences: AudiencesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List audiences', description: 'Audiences of your workspace, newest first by default.' })
  @ApiList(AudienceDto, [
    { name: 'customer', description: 'Workspace id; any other than yours gives an empty page.', schema: ID_SCHEMA },
    { name: 'status', description: 'Only this status.', schema: { type: 'string', enum: [...AUDIENCE_STATUSES] } },
    { name: 'source_type', description: 'Only this source type.', schema: { type: 'string', enum: [...SOURCE_TYPES] } },
    { name: 'search', description: 'Name contains this text, ignoring letter case.', schema: { type: 'string', maxLength: 255 } },
  ])
  @ApiProblems(400, 404)
  list(@Query() query: QueryString, @Req() request: FastifyRequest) {
    const page = parsePageRequest(query, { orderingFields: ORDERING_FIELDS });
    return this.audiences.list(parseAudienceFilters(query), page, requestUrl(request, this.config));
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Create an audience',
    description:
      'A new audience in your workspace, status `draft`. `model_instance` is required when `source_type` is `model`; references must be objects of your workspace. Names are unique per workspace, ignoring case.',
  })
  @ApiCreatedResponse({ type: AudienceDto, description: 'The new audience.' })
  @ApiProblems(400, 413, 415)
  create(@Body() body: CreateAudienceDto): Promise<AudienceDto> {
    return this.audiences.create(body);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get an audience',
    description: 'One audience of your workspace; another workspace’s id answers 404 like one that does not exist.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AudienceDto, description: 'The audience.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<AudienceDto> {
    return this.audiences.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update an audience',
    description:
      'Changes the fields given. An archived audience cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AudienceDto, description: 'The audience as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateAudienceDto): Promise<AudienceDto> {
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
