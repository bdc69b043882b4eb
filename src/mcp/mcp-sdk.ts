import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** The parts of the MCP SDK the endpoint uses. */
export interface McpSdk {
  Server: typeof Server;
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  CallToolRequestSchema: typeof CallToolRequestSchema;
  ListToolsRequestSchema: typeof ListToolsRequestSchema;
  ErrorCode: typeof ErrorCode;
}

let loading: Promise<McpSdk> | undefined;

/**
 * The MCP SDK, loaded on the first MCP request rather than at start (issue 32): its server, its
 * transport and its protocol schemas (zod) are 9.6 MB of heap and 30 MB of RSS once loaded
 * (`process.memoryUsage()` around the imports, Node 20), which a process that serves no agent,
 * such as a worker or an API behind which no agent calls, need not carry. The first MCP request
 * waits for the load once; the modules stay for the process's life.
 */
export function mcpSdk(): Promise<McpSdk> {
  loading ??= load();
  return loading;
}

/**
 * One module after the other, not with Promise.all: the three share modules (zod), and Jest's
 * module linker failed the second import of a shared one while the first was still linking
 * ("request for 'zod/v4' is not in cache"). Node itself loads them either way.
 */
async function load(): Promise<McpSdk> {
  const server = await import('@modelcontextprotocol/sdk/server/index.js');
  const http = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode,
  };
}
