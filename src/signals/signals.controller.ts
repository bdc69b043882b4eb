import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { IdPipe } from '../common/http/id-param.js';
import type { Query as QueryString } from '../common/http/query-filters.js';
import { Idempotent } from '../common/idempotency/idempotent.decorator.js';
import { ApiList, requestUrl } from '../common/pagination/list-endpoint.js';
import { parsePageRequest } from '../common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../common/tenancy/tenant-repository.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ApiProblems } from '../openapi/problem-details.schema.js';
import { CreateSignalDto, SignalDto, UpdateSignalDto } from './dto/signal.dto.js';
import { SIGNAL_STATUS_CODES, SIGNAL_TYPES } from './signal.entity.js';
import { parseSignalFilters } from './signal-filters.js';
import { SignalsService } from './signals.service.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

@ApiTags('signals')
@Controller('api/v1/signals')
export class SignalsController {
  constructor(
    private readonly signals: SignalsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List signals', description: 'Signals of your workspace, newest first by default.' })
  @ApiList(SignalDto, [
    {
      name: 'status',
      description: 'Only this status code: 0 draft, 1 active, 2 paused, 3 failed, 4 archived. Anything else → 400.',
      schema: { type: 'integer', enum: [...SIGNAL_STATUS_CODES], minimum: 0, maximum: 4 },
    },
    { name: 'signal_type', description: 'Only this signal type.', schema: { type: 'string', enum: [...SIGNAL_TYPES] } },
    { name: 'model_instance', description: 'Only signals fed by this AI model instance.', schema: ID_SCHEMA },
    { name: 'audience', description: 'Only signals for this audience.', schema: ID_SCHEMA },
    { name: 'connection', description: 'Only signals sent through this connection.', schema: ID_SCHEMA },
    { name: 'search', description: 'Name contains this text, ignoring letter case.', schema: { type: 'string', maxLength: 255 } },
  ])
  @ApiProblems(400, 404)
  list(@Query() query: QueryString, @Req() request: FastifyRequest) {
    const page = parsePageRequest(query, { orderingFields: ORDERING_FIELDS });
    return this.signals.list(parseSignalFilters(query), page, requestUrl(request, this.config));
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
  @ApiCreatedResponse({ type: SignalDto, description: 'The new signal.' })
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
