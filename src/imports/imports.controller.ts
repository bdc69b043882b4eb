import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiAcceptedResponse, ApiConsumes, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { ApiProblems } from '../common/errors/problem-details.schema.js';
import { IdPipe } from '../common/http/id-param.js';
import { ApiList } from '../common/pagination/list-endpoint.js';
import { ListQuery, PageLinks } from '../common/pagination/list-query.js';
import { ID_SCHEMA } from '../common/validation/fields.js';
import { queryFieldsOf, readQuery } from '../common/validation/query-fields.js';
import { CreateImportQuery } from './dto/create-import.query.js';
import { ImportDto } from './dto/import.dto.js';
import { ListImportsQuery } from './dto/list-imports.query.js';
import { ImportsService } from './imports.service.js';

const QUERY_PARAMETERS = queryFieldsOf(CreateImportQuery).map((field) => ({
  name: field.name,
  required: field.name === 'target',
  schema: field.schema,
  description: field.description,
}));

@ApiTags('imports')
@Controller('api/v1/imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Get()
  @ApiOperation({ summary: 'List imports', description: 'Imports of your workspace, newest first by default.' })
  @ApiList(ImportDto, ListImportsQuery)
  @ApiProblems(400, 404)
  list(@ListQuery() query: ListImportsQuery, @PageLinks() links: URL) {
    return this.imports.list(query, links);
  }

  @Post()
  // The one route that takes a CSV or NDJSON body, as a stream (common/http/json-body-parser.ts).
  @RouteConfig({ streamBody: true })
  @HttpCode(202)
  @ApiOperation({
    summary: 'Import a file of people',
    description:
      'A CSV (header row: `external_id`, identifier names, `consent_ad_user_data`, `consent_ad_personalization`; every other column is a trait, a string unless its header declares `:number` or `:boolean`, e.g. `ltv:number`) ' +
      'or NDJSON (one person object per line, as in a people batch) of any size up to IMPORT_MAX_BYTES (default 1 GiB). The file is streamed: each row is normalised and hashed as it arrives, and only hashes and the columns kept in clear are stored. ' +
      'The answer comes once the whole file is staged: 202 with the import, `queued`; poll it until `succeeded` (every accepted row applied) or `failed` (nothing applied). ' +
      'A file that is neither CSV nor NDJSON, or has no usable column, gives an import that is `failed` at once, with the reason in `errors_sample`. ' +
      '`target=audience` (with `audience` and `mode`) is read but answered 400 under `target`: audience imports come with audience membership. ' +
      'No `Idempotency-Key`: the body is streamed, not kept; importing a file twice upserts the same people twice, with the same result.',
  })
  @ApiQuery(QUERY_PARAMETERS[0])
  @ApiQuery(QUERY_PARAMETERS[1])
  @ApiQuery(QUERY_PARAMETERS[2])
  @ApiConsumes('text/csv', 'application/x-ndjson')
  // maxLength is the default IMPORT_MAX_BYTES (a deployment may set another), in bytes of UTF-8 text.
  @ApiBody({
    schema: { type: 'string', format: 'binary', maxLength: 1024 ** 3 },
    description: 'The file, up to IMPORT_MAX_BYTES (default 1 GiB).',
  })
  @ApiAcceptedResponse({ type: ImportDto, description: 'The import: `queued`, or `failed` when the file was refused whole.' })
  @ApiProblems(400, 409, 413, 415)
  async create(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<ImportDto> {
    const length = Number(request.headers['content-length']);
    try {
      return await this.upload(request, Number.isFinite(length) ? length : undefined);
    } finally {
      // An answer before the whole body was read (413, a refused file, a 401 never gets here): the
      // rest of the body is not read, so the connection closes after the answer rather than stall
      // with a client still writing into it.
      if (!request.raw.complete) {
        reply.header('connection', 'close');
        // Null once the client has gone: nothing is left to close then.
        const socket = request.raw.socket as Socket | null;
        if (socket !== null) reply.raw.once('finish', () => socket.destroySoon());
      }
    }
  }

  private upload(request: FastifyRequest, declaredLength: number | undefined): Promise<ImportDto> {
    // Only the CSV and NDJSON parser hands over a stream; a JSON body or none reaches here as something else.
    if (!(request.body instanceof Readable))
      throw new ApiError(415, 'unsupported_media_type', 'Send the file as text/csv or application/x-ndjson.');
    return this.imports.upload(readQuery(CreateImportQuery, request.query as Record<string, unknown>), {
      format: request.headers['content-type']?.startsWith('text/csv') ? 'csv' : 'ndjson',
      body: request.body,
      declaredLength,
      watchIdle: (ms, onIdle) => {
        const socket = request.raw.socket;
        socket.setTimeout(ms, onIdle);
        // The socket outlives the request (keep-alive): the next request on it must not inherit the timer.
        return () => {
          socket.setTimeout(0);
          socket.off('timeout', onIdle);
        };
      },
    });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an import', description: 'One import of your workspace, with its counts and rejected rows.' })
  @ApiParam({ name: 'id', schema: ID_SCHEMA })
  @ApiOkResponse({ type: ImportDto, description: 'The import.' })
  @ApiProblems(404)
  retrieve(@Param('id', IdPipe) id: number): Promise<ImportDto> {
    return this.imports.get(id);
  }
}
