import { CreateSignalDto, UpdateSignalDto } from '../../signals/dto/signal.dto.js';
import { ListSignalsQuery } from '../../signals/dto/list-signals.query.js';
import type { SignalsService } from '../../signals/signals.service.js';
import type { McpTool } from '../mcp-tool.js';
import { createTool, getTool, listTool, updateTool } from './tool-helpers.js';

const STATUS_MEANING = '0 draft, 1 active (sending), 2 paused, 3 failed (set by the platform), 4 archived (final, read-only)';

const restPath = '/api/v1/signals/';

export function signalTools(signals: SignalsService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_signals',
      title: 'List signals',
      description:
        "Lists the workspace's signals (streams of conversions, values or model scores sent to an ad platform to steer bidding), " +
        `newest first. Status codes: ${STATUS_MEANING}.`,
      restPath,
      publicBaseUrl,
      query: ListSignalsQuery,
      list: (call) => signals.list(call.query, call.url),
    }),
    getTool({
      name: 'get_signal',
      title: 'Get a signal',
      description: 'Returns one signal by id. An id outside this workspace gives not_found.',
      restPath,
      get: (id) => signals.get(id),
    }),
    createTool({
      name: 'create_signal',
      title: 'Create a signal',
      description:
        'Creates a signal, in status 0 (draft) unless you pass 1 (active: needs an active connection) or 4. Needs role editor or admin. ' +
        'References to objects outside this workspace are refused like ids that do not exist.',
      restPath,
      body: CreateSignalDto,
      create: (body) => signals.create(body),
    }),
    updateTool({
      name: 'update_signal',
      title: 'Update a signal',
      description:
        'Changes the given fields of a signal; others keep their value. To activate set status 1 (the signal needs an active ' +
        'connection), to pause 2, to archive 4. Setting the status it already has changes nothing. An archived signal cannot change. ' +
        'Needs role editor or admin.',
      restPath,
      body: UpdateSignalDto,
      update: (id, body) => signals.update(id, body),
    }),
  ];
}
