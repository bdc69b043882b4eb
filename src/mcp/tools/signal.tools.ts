import { validateDto } from '../../common/validation/validate-dto.js';
import { CreateSignalDto, UpdateSignalDto } from '../../signals/dto/signal.dto.js';
import { parseSignalFilters } from '../../signals/signal-filters.js';
import type { SignalsService } from '../../signals/signals.service.js';
import { ID_ARGUMENT, type JsonSchema, type McpTool } from '../mcp-tool.js';
import { getTool, idArgument, listTool, withoutId } from './tool-helpers.js';

const STATUS_MEANING = '0 draft, 1 active (sending), 2 paused, 3 failed (set by the platform), 4 archived (final, read-only)';

const SIGNAL: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { type: 'integer' },
    name: { type: 'string' },
    description: { type: 'string' },
    signal_type: { type: 'string', enum: ['conversion', 'value', 'score'] },
    status: { type: 'integer', enum: [0, 1, 2, 3, 4], description: STATUS_MEANING },
    model_instance: { type: ['integer', 'null'] },
    audience: { type: ['integer', 'null'] },
    connection: { type: ['integer', 'null'] },
    config: { type: 'object' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const WRITABLE: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 255, description: 'Signal name.' },
  description: { type: 'string', maxLength: 2000, description: 'Free text, default "".' },
  signal_type: {
    type: 'string',
    enum: ['conversion', 'value', 'score'],
    description: 'What the signal sends: conversions, conversion values, or model scores.',
  },
  status: {
    type: 'integer',
    enum: [0, 1, 2, 3, 4],
    description:
      `Status code: ${STATUS_MEANING}. Allowed changes: 0→1, 1→2, 2→1, 3→1, and any non-archived → 4. ` +
      'Activating (→1) needs a connection whose status is "active".',
  },
  model_instance: { type: ['integer', 'null'], description: 'Id of the AI model instance whose outputs the signal sends, or null.' },
  audience: { type: ['integer', 'null'], description: 'Id of the audience the signal is about, or null.' },
  connection: { type: ['integer', 'null'], description: 'Id of the ad-platform connection the signal sends to, or null.' },
  config: { type: 'object', description: 'Settings as a JSON object (at most 64 KiB, nesting at most 10 levels).' },
};

export function signalTools(signals: SignalsService, publicBaseUrl: string): McpTool[] {
  return [
    listTool({
      name: 'list_signals',
      title: 'List signals',
      description:
        "Lists the workspace's signals (streams of conversions, values or model scores sent to an ad platform to steer bidding), " +
        `newest first. Status codes: ${STATUS_MEANING}.`,
      filters: {
        status: { type: 'integer', enum: [0, 1, 2, 3, 4], description: 'Only signals with this status code.' },
        signal_type: { type: 'string', enum: ['conversion', 'value', 'score'], description: 'Only signals of this type.' },
        model_instance: { type: 'integer', description: 'Only signals using this AI model instance.' },
        audience: { type: 'integer', description: 'Only signals about this audience.' },
        connection: { type: 'integer', description: 'Only signals sending to this connection.' },
        search: { type: 'string', description: 'Only signals whose name contains this text (ignoring case).' },
      },
      item: SIGNAL,
      restPath: '/api/v1/signals/',
      publicBaseUrl,
      list: (call) => signals.list(parseSignalFilters(call.query), call.page, call.url),
    }),
    getTool({
      name: 'get_signal',
      title: 'Get a signal',
      description: 'Returns one signal by id. An id outside this workspace gives not_found.',
      item: SIGNAL,
      get: (id) => signals.get(id),
    }),
    {
      name: 'create_signal',
      title: 'Create a signal',
      description:
        'Creates a signal, in status 0 (draft) unless you pass 1 (active: needs an active connection) or 4. Needs role editor or admin. ' +
        'References to objects outside this workspace are refused like ids that do not exist.',
      inputSchema: { type: 'object', properties: WRITABLE, required: ['name', 'signal_type'], additionalProperties: false },
      outputSchema: SIGNAL,
      writes: true,
      async call(_identity, args) {
        return { ...(await signals.create(await validateDto(CreateSignalDto, args))) };
      },
    },
    {
      name: 'update_signal',
      title: 'Update a signal',
      description:
        'Changes the given fields of a signal; others keep their value. To activate set status 1 (the signal needs an active ' +
        'connection), to pause 2, to archive 4. Setting the status it already has changes nothing. An archived signal cannot change. ' +
        'Needs role editor or admin.',
      inputSchema: { type: 'object', properties: { id: ID_ARGUMENT, ...WRITABLE }, required: ['id'], additionalProperties: false },
      outputSchema: SIGNAL,
      writes: true,
      async call(_identity, args) {
        const id = idArgument(args);
        return { ...(await signals.update(id, await validateDto(UpdateSignalDto, withoutId(args)))) };
      },
    },
  ];
}
