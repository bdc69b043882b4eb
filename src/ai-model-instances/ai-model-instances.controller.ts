import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { IdPipe } from '../common/http/id-param.js';
import { Idempotent } from '../common/idempotency/idempotent.decorator.js';
import type { Query as QueryString } from '../common/http/query-filters.js';
import { parseAiModelInstanceFilters } from './ai-model-instance-filters.js';
import { ApiList, requestUrl } from '../common/pagination/list-endpoint.js';
import { parsePageRequest } from '../common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../common/tenancy/tenant-repository.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ApiProblems } from '../openapi/problem-details.schema.js';
import { MODEL_STATUSES, MODEL_TYPES } from './ai-model-instance.entity.js';
import { AiModelInstancesService } from './ai-model-instances.service.js';
import { AiModelInstanceDto, CreateAiModelInstanceDto, UpdateAiModelInstanceDto } from './dto/ai-model-instance.dto.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('ai-model-instances')
@Controller('api/v1/ai-model-instances')
export class AiModelInstancesController {
  constructor(
    private readonly models: AiModelInstancesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List AI model instances', description: 'AI model instances of your workspace, newest first by default.' })
  @ApiList(AiModelInstanceDto, [
    { name: 'status', description: 'Only this status.', schema: { type: 'string', enum: [...MODEL_STATUSES] } },
    { name: 'model_type', description: 'Only this model type.', schema: { type: 'string', enum: [...MODEL_TYPES] } },
    { name: 'search', description: 'Name contains this text, ignoring letter case.', schema: { type: 'string', maxLength: 255 } },
  ])
  @ApiProblems(400, 404)
  list(@Query() query: QueryString, @Req() request: FastifyRequest) {
    const page = parsePageRequest(query, { orderingFields: ORDERING_FIELDS });
    return this.models.list(parseAiModelInstanceFilters(query), page, requestUrl(request, this.config));
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Create an AI model instance',
    description: 'Starts `pending` unless `status` names one reachable from it: `training` (version 1) or `archived`.',
  })
  @ApiCreatedResponse({ type: AiModelInstanceDto, description: 'The new model instance.' })
  @ApiProblems(400, 413, 415)
  create(@Body() body: CreateAiModelInstanceDto): Promise<AiModelInstanceDto> {
    return this.models.create(body);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get an AI model instance',
    description: 'One model instance of your workspace, with its `metrics` and training `version`; another workspace’s id answers 404.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AiModelInstanceDto, description: 'The model instance.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<AiModelInstanceDto> {
    return this.models.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update an AI model instance',
    description:
      'Changes the fields given; the training pipeline reports `status` and `metrics` this way. Status moves follow the rules of the ' +
      '`status` field. An archived instance cannot change: a PATCH that would change it is a 400, one that changes nothing a 200.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: AiModelInstanceDto, description: 'The model instance as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateAiModelInstanceDto): Promise<AiModelInstanceDto> {
    return this.models.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete an AI model instance',
    description: 'Refused with 409 while an audience or a signal uses the instance.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(404, 409)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.models.delete(id);
  }
}
