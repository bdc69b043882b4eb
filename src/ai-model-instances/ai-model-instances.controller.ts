import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { IdPipe } from '../common/http/id-param.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { AiModelInstancesService } from './ai-model-instances.service.js';
import { ListAiModelInstancesQuery } from './dto/list-ai-model-instances.query.js';
import {
  AiModelInstanceDto,
  CREATE_MODEL_EXAMPLES,
  CreateAiModelInstanceDto,
  UpdateAiModelInstanceDto,
} from './dto/ai-model-instance.dto.js';
import { ApiCreateExamples } from '../openapi/create-examples.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('ai-model-instances')
@Controller('api/v1/ai-model-instances')
export class AiModelInstancesController {
  constructor(private readonly models: AiModelInstancesService) {}

  @Get()
  @ApiOperation({ summary: 'List AI model instances', description: 'AI model instances of your workspace, newest first by default.' })
  @ApiList(AiModelInstanceDto, ListAiModelInstancesQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListAiModelInstancesQuery, @PageLinks() links: URL) {
    return this.models.list(query, links);
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Create an AI model instance',
    description: 'Starts `pending` unless `status` names one reachable from it: `training` (version 1) or `archived`.',
  })
  @ApiCreateExamples(CreateAiModelInstanceDto, AiModelInstanceDto, 'The new model instance.', CREATE_MODEL_EXAMPLES)
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
