import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { AiModelInstancesService } from '../ai-model-instances/ai-model-instances.service.js';
import { AudiencesService } from '../audiences/audiences.service.js';
import { assertCanWrite } from '../auth/access-policy.js';
import type { Identity } from '../common/access/identity.js';
import { ApiError } from '../common/errors/api-error.js';
import { DEPENDENCY_UNAVAILABLE_DETAIL, unavailableDependency } from '../common/errors/database-errors.js';
import { OutageLog } from '../common/errors/outage-log.js';
import { ConnectionsService } from '../connections/connections.service.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { LOGGER } from '../logging/logger.token.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiDocument } from '../openapi/api-document.js';
import { API_VERSION } from '../openapi/openapi.js';
import { SignalsService } from '../signals/signals.service.js';
import { UsersService } from '../users/users.service.js';
import { type McpSdk, mcpSdk } from './mcp-sdk.js';
import type { McpTool } from './mcp-tool.js';
import { aiModelInstanceTools } from './tools/ai-model-instance.tools.js';
import { audienceTools } from './tools/audience.tools.js';
import { PeopleService } from '../people/people.service.js';
import { connectionTools } from './tools/connection.tools.js';
import { peopleTools } from './tools/people.tools.js';
import { signalTools } from './tools/signal.tools.js';
import { syncTools } from './tools/sync.tools.js';
import { SyncsService } from '../syncs/syncs.service.js';
import { whoamiTool } from './tools/whoami.tool.js';

const INSTRUCTIONS =
  'Tools of the Audience and Signal Platform: audiences (who to target) and their members, people (read-only), signals (data streams sent to ad platforms), AI model ' +
  'instances, ad-platform connections and audience syncs to them, of one workspace. Everything you see and change belongs to the workspace of your token. ' +
  'Errors come back as tool results with isError=true and a JSON body {code, detail, errors}: validation_error (errors names each bad ' +
  'field), not_found, permission_denied (your role may only read), conflict, service_unavailable (the database is down for a ' +
  'moment: call again in a few seconds).';

/**
 * Builds a fresh MCP server for one request (stateless, SPEC section 7): tools are bound to the
 * caller's identity, so nothing of one client can reach another.
 */
@Injectable()
export class McpServerFactory implements OnApplicationBootstrap {
  private readonly tools: McpTool[];
  private readonly byName: Map<string, McpTool>;
  /** tools/list, with the schemas read from the OpenAPI document (built after this factory, before bootstrap). */
  private listing?: Tool[];

  constructor(
    users: UsersService,
    audiences: AudiencesService,
    signals: SignalsService,
    models: AiModelInstancesService,
    connections: ConnectionsService,
    people: PeopleService,
    syncs: SyncsService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly apiDocument: ApiDocument,
    private readonly metrics: Metrics,
    /** During an outage every tool call fails alike: one line per 10 s, not one per call. */
    private readonly outages: OutageLog,
  ) {
    const base = config.publicBaseUrl ?? `http://localhost:${config.port}`;
    this.tools = [
      whoamiTool(users),
      ...audienceTools(audiences, base),
      ...signalTools(signals, base),
      ...aiModelInstanceTools(models, base),
      ...connectionTools(connections, base),
      ...peopleTools(people, base),
      ...syncTools(syncs, base),
    ];
    this.byName = new Map(this.tools.map((tool) => [tool.name, tool]));
  }

  /** At start-up, so a tool whose REST operation is missing from the document stops the service instead of its first agent. */
  onApplicationBootstrap(): void {
    this.listTools();
  }

  private listTools(): Tool[] {
    this.listing ??= this.tools.map((tool) => {
      const { input, output } = tool.schemas(this.apiDocument.get());
      return {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: input as Tool['inputSchema'],
        outputSchema: output as Tool['outputSchema'],
        annotations: {
          title: tool.title,
          readOnlyHint: !tool.writes,
          destructiveHint: tool.destructive,
          idempotentHint: tool.idempotent,
          openWorldHint: false,
        },
      };
    });
    return this.listing;
  }

  /**
   * `requestId` is the HTTP request's, so that a tool's error line can be found next to its request
   * line. The SDK is loaded by the first call (mcp-sdk.ts).
   */
  async create(identity: Identity, requestId: string): Promise<Server> {
    const sdk = await mcpSdk();
    const { Server, ListToolsRequestSchema, CallToolRequestSchema } = sdk;
    const server = new Server(
      { name: 'audience-signal-platform', version: API_VERSION },
      { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, async (request) =>
      this.call(sdk, identity, request.params.name, request.params.arguments ?? {}, requestId),
    );
    return server;
  }

  /**
   * One tools/call: the tool's answer, or a tool error with the REST code. Each call is one log
   * line (tool, outcome, duration, request id: the HTTP line only says `POST /mcp`) and one
   * observation of `mcp_tool_calls_total` and `mcp_tool_call_duration_seconds`.
   */
  private async call(
    sdk: McpSdk,
    identity: Identity,
    name: string,
    args: Record<string, unknown>,
    requestId: string,
  ): Promise<CallToolResult> {
    if (!this.byName.has(name)) {
      this.record(requestId, '<unknown>', 'unknown_tool');
      // The protocol's answer to a call of a tool that does not exist: a JSON-RPC error, not a tool
      // result. A plain error with the code, not McpError, whose message already starts with
      // "MCP error -32602:", which the client's McpError then printed a second time.
      throw Object.assign(new Error(`Unknown tool "${name.slice(0, 64)}". Call tools/list for the available tools.`), {
        code: sdk.ErrorCode.InvalidParams,
      });
    }
    const started = performance.now();
    const [result, outcome] = await this.answer(identity, name, args, requestId);
    this.record(requestId, name, outcome, (performance.now() - started) / 1000);
    return result;
  }

  /** The call's log line and metrics; no duration for a call that reached no tool. */
  private record(requestId: string, tool: string, outcome: string, seconds?: number): void {
    this.metrics.mcpToolCalls.inc({ tool, outcome });
    if (seconds !== undefined) this.metrics.mcpToolDuration.observe({ tool }, seconds);
    const duration = seconds === undefined ? {} : { duration_ms: Math.round(seconds * 100_000) / 100 };
    this.logger.info({ request_id: requestId, tool, outcome, ...duration }, 'MCP tool call');
  }

  /** The call's result and its outcome: `ok`, or the error code the tool error carries. */
  private async answer(
    identity: Identity,
    name: string,
    args: Record<string, unknown>,
    requestId: string,
  ): Promise<[CallToolResult, string]> {
    const tool = this.byName.get(name)!;
    try {
      if (tool.writes) assertCanWrite(identity);
      const result = await tool.call(identity, args);
      return [{ content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }, 'ok'];
    } catch (error) {
      if (error instanceof ApiError) return toolError(error);
      // A database that is down is the REST 503 (SPEC section 8): the agent may call again, unlike after internal_error.
      const dependency = unavailableDependency(error);
      if (dependency) {
        this.outages.report(dependency, error, { request_id: requestId, tool: name }, 'MCP tool failed');
        return toolError(new ApiError(503, 'service_unavailable', DEPENDENCY_UNAVAILABLE_DETAIL[dependency]));
      }
      this.logger.error({ err: error, request_id: requestId, tool: name }, 'MCP tool failed');
      return toolError(new ApiError(500, 'internal_error', 'An internal error occurred.'));
    }
  }
}

/** A tool error carrying the REST error code and message (SPEC section 7), with that code as the call's outcome. */
function toolError(error: ApiError): [CallToolResult, string] {
  const body = { code: error.code, detail: error.detail, ...(error.errors ? { errors: error.errors } : {}) };
  return [{ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }, error.code];
}
