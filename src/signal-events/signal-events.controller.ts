import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiAcceptedResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { EventsAcceptedDto, ListSignalEventsQuery, SignalEventDto, SignalEventsBatchDto } from './dto/signal-event.dto.js';
import { MAX_EVENTS_PER_REQUEST } from './signal-event-input.js';
import { SignalEventsService } from './signal-events.service.js';

@ApiTags('signals')
@Controller('api/v1/signals/:id/events')
export class SignalEventsController {
  constructor(private readonly events: SignalEventsService) {}

  @Post()
  // 1,000 events of at most 12 fields, each with up to 9 identifiers of up to 5 values.
  @RouteConfig({ maxJsonKeys: MAX_EVENTS_PER_REQUEST * 30 })
  @HttpCode(202)
  @Idempotent(202)
  @ApiOperation({
    summary: 'Send events of a signal',
    description:
      'Up to 1,000 conversions or values for the signal’s destination (SPEC 10.4). Each event is checked on its own against the platform of the signal’s connection; ' +
      'identifiers are normalised and hashed on arrival and never stored in clear. A repeated `event_id` (within 30 days, also across concurrent requests) is counted in `duplicates`. ' +
      'Accepted events are delivered in the background; an active signal sends them at once, a paused or failed one holds them until it is active again (at most 7 days). ' +
      'A draft or archived signal: 409.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiAcceptedResponse({ type: EventsAcceptedDto, description: 'How many events were accepted and repeated, and the events rejected.' })
  @ApiProblems(400, 404, 409, 413, 415)
  accept(@Param('id', IdPipe) id: number, @Body() body: SignalEventsBatchDto): Promise<EventsAcceptedDto> {
    return this.events.accept(id, body.events);
  }

  @Get()
  @ApiOperation({
    summary: 'List events of a signal',
    description: 'The signal’s events of the last 30 days with their delivery state, newest first by default; never their identifiers.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiList(SignalEventDto, ListSignalEventsQuery)
  @ApiProblems(400, 404)
  list(@Param('id', IdPipe) id: number, @ListQuery() query: ListSignalEventsQuery, @PageLinks() links: URL) {
    return this.events.list(id, query, links);
  }
}
