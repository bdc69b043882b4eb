import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { MAX_SCORES, ScoresWrittenDto, WriteScoresDto } from './dto/model-scores.dto.js';
import { ModelScoresService } from './model-scores.service.js';

@ApiTags('ai-model-instances')
@Controller('api/v1/ai-model-instances/:id/scores')
export class ModelScoresController {
  constructor(private readonly scores: ModelScoresService) {}

  @Post()
  // 10,000 objects of two keys each, and the body's own.
  @RouteConfig({ maxJsonKeys: MAX_SCORES * 3 + 10 })
  @HttpCode(200)
  @Idempotent(200)
  @ApiOperation({
    summary: 'Write model scores',
    description:
      'Up to 10,000 scores (0–1) by external_id, for the model instance’s current `version`: each replaces the person’s previous score from this model. ' +
      'Model audiences of the instance are recomputed afterwards (debounced). For the training pipeline, with an API key of write scope. An archived instance: 409.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: ScoresWrittenDto, description: 'How many scores were stored, and the external ids that name nobody.' })
  @ApiProblems(400, 404, 409, 413, 415)
  write(@Param('id', IdPipe) id: number, @Body() body: WriteScoresDto): Promise<ScoresWrittenDto> {
    return this.scores.write(id, body.scores);
  }
}
