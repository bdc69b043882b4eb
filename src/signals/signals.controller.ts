import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { IdPipe } from '../common/http/id-param.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { CREATE_SIGNAL_EXAMPLES, CreateSignalDto, SignalDto, UpdateSignalDto } from './dto/signal.dto.js';
import { ApiCreateExamples } from '../openapi/create-examples.js';
import { SignalsService } from './signals.service.js';
import { ListSignalsQuery } from './dto/list-signals.query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('signals')
@Controller('api/v1/signals')
export class SignalsController {
  constructor(private readonly signals: SignalsService) {}

  @Get()
  @ApiOperation({ summary: 'List signals', description: 'Signals of your workspace, newest first by default.' })
  @ApiList(SignalDto, ListSignalsQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListSignalsQuery, @PageLinks() links: URL) {
    return this.signals.list(query, links);
  }

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Create a signal',
    description:
      'A new signal is a draft (status 0) unless `status` says otherwise. Creating counts as the transition from 0: ' +
      'status 1 (active) needs `connection` to be an active connection of your workspace, 4 (archived) is allowed, ' +
      '2 (paused) and 3 (failed) are refused with a 400 under `status`.',
  })
  @ApiCreateExamples(CreateSignalDto, SignalDto, 'The new signal.', CREATE_SIGNAL_EXAMPLES)
  @ApiProblems(400, 413, 415)
  create(@Body() body: CreateSignalDto): Promise<SignalDto> {
    return this.signals.create(body);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a signal',
    description: 'One signal of your workspace; another workspace’s id answers 404 like one that does not exist.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: SignalDto, description: 'The signal.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<SignalDto> {
    return this.signals.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a signal',
    description:
      'Changes the fields given. Status transitions: 0→1, 1→2, 2→1, 3→1, any but 4 → 4; setting the current status is a no-op. ' +
      'Activating (→1) needs the resulting `connection` to be an active connection of your workspace, and an active signal ' +
      'cannot be left without one. Refused transitions are a 400 under `status`. An archived signal (4) cannot change: ' +
      'a PATCH that would change it is a 400, one that changes nothing a 200.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: SignalDto, description: 'The signal as it is now.' })
  @ApiProblems(400, 404, 413, 415)
  partialUpdate(@Param('id', IdPipe) id: number, @Body() body: UpdateSignalDto): Promise<SignalDto> {
    return this.signals.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a signal',
    description: 'Removes the signal for good (archive it instead to keep its history). 204, no body.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(404)
  destroy(@Param('id', IdPipe) id: number): Promise<void> {
    return this.signals.delete(id);
  }
}
