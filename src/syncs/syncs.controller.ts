import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { CreateSyncDto, SyncRunDto, SyncRunsDto } from './dto/sync-run.dto.js';
import { ListSyncsQuery } from './dto/list-syncs.query.js';
import { SyncsService } from './syncs.service.js';

@ApiTags('syncs')
@Controller('api/v1/syncs')
export class SyncsController {
  constructor(private readonly syncs: SyncsService) {}

  @Get()
  @ApiOperation({ summary: 'List sync runs', description: 'Runs of your workspace’s audience syncs, newest first by default.' })
  @ApiList(SyncRunDto, ListSyncsQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListSyncsQuery, @PageLinks() links: URL) {
    return this.syncs.list(query, links);
  }

  @Post()
  @HttpCode(201)
  @Idempotent(201)
  @ApiOperation({
    summary: 'Sync an audience now',
    description:
      'Starts a run per destination of an active audience (or for the one `connection` names). A destination with a real run already queued or running gets that run back instead of a second one (still 201). ' +
      'A dry run is a run of its own: it counts `planned_add`, `planned_remove` and the skips, sends nothing and ends `succeeded`. ' +
      'An audience that is not active, or a connection that is not one of its destinations: 400.',
  })
  @ApiCreatedResponse({ type: SyncRunsDto, description: 'The runs, one per destination.' })
  @ApiProblems(400, 409, 413, 415)
  start(@Body() body: CreateSyncDto): Promise<SyncRunsDto> {
    return this.syncs.start(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a sync run', description: 'One run with its counts, skips by reason and error.' })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: SyncRunDto, description: 'The run.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<SyncRunDto> {
    return this.syncs.get(id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a queued sync run',
    description: 'A queued run turns `cancelled`; a run that has started or ended: 409.',
  })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: SyncRunDto, description: 'The cancelled run.' })
  @ApiProblems(404, 409)
  cancel(@Param('id', IdPipe) id: number): Promise<SyncRunDto> {
    return this.syncs.cancel(id);
  }
}
