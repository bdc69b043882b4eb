import { ListSyncsQuery } from '../../syncs/dto/list-syncs.query.js';
import { CreateSyncDto } from '../../syncs/dto/sync-run.dto.js';
import type { SyncsService } from '../../syncs/syncs.service.js';
import type { McpTool } from '../mcp-tool.js';
import { createTool, getTool, listTool } from './tool-helpers.js';

const restPath = '/api/v1/syncs/';

/** Audience syncs (SPEC 10.3): agents read runs and start them, as editors and admins do over REST. */
export function syncTools(syncs: SyncsService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_syncs',
      title: 'List sync runs',
      description:
        "Lists the workspace's audience sync runs (to Google and Meta), newest first, one page at a time, with what each sent, removed, " +
        'skipped and failed. Filter by audience, connection or status (queued, running, awaiting_platform, succeeded, partially_failed, failed, cancelled).',
      restPath,
      publicBaseUrl,
      query: ListSyncsQuery,
      list: (call) => syncs.list(call.query, call.url),
    }),
    getTool({
      name: 'get_sync',
      title: 'Get a sync run',
      description:
        'Returns one sync run by id: its counts, failures by reason, match rate and error in words. An id that is not in this workspace gives a not_found error.',
      restPath,
      get: (id) => syncs.get(id),
    }),
    createTool({
      name: 'start_sync',
      title: 'Sync an audience now',
      description:
        'Starts a sync of an active audience to each of its destinations (or only to `connection`), or returns the run already queued or running ' +
        'for a destination. With dry_run true it only counts what it would send. Needs role editor or admin. Follow the runs with get_sync.',
      restPath,
      body: CreateSyncDto,
      create: (body) => syncs.start(body),
    }),
  ];
}
