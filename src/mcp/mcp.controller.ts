import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { McpOnly } from '../common/access/access.decorators.js';
import { DEPENDENCY_RETRY_AFTER_SECONDS, DEPENDENCY_UNAVAILABLE_DETAIL, unavailableDependency } from '../common/errors/database-errors.js';
import { OutageLog } from '../common/errors/outage-log.js';
import { LOGGER } from '../logging/logger.token.js';
import { mcpSdk } from './mcp-sdk.js';
import { McpServerFactory } from './mcp-server.factory.js';

/**
 * Streamable HTTP MCP endpoint (SPEC section 7), stateless: a fresh server and transport per
 * request, no session ids. Only POST exists, so GET and DELETE answer 405 like any other route.
 * JSON-RPC is not REST, so it stays out of the OpenAPI document; the README describes the tools.
 * The response is the SDK's, so an error outside any tool is answered here as JSON-RPC: 503 with
 * Retry-After when the database or Redis is down (SPEC section 8), else 500.
 */
@ApiExcludeController()
@McpOnly()
@Controller('mcp')
export class McpController {
  constructor(
    private readonly servers: McpServerFactory,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly outages: OutageLog,
  ) {}

  @Post()
  async handle(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const requestId = String(request.id);
    // One message per request: a JSON-RPC batch of 100 tool calls counted once against the rate
    // limit, and eight of them held the whole database pool. MCP dropped batches in its 2025-06-18
    // revision, so they are refused rather than counted call by call.
    if (Array.isArray(request.body)) {
      void reply
        .status(400)
        .type('application/json')
        .send({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'JSON-RPC batches are not supported: send one message per request.' },
          id: null,
        });
      return;
    }
    const { StreamableHTTPServerTransport } = await mcpSdk();
    const server = await this.servers.create(request.identity!, requestId);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The SDK writes the response itself; Fastify must not send one of its own. The headers set so
    // far (request id, security headers, rate limit) go onto the raw response first, or they would be lost.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      const dependency = unavailableDependency(error);
      if (dependency) this.outages.report(dependency, error, { request_id: requestId }, 'MCP request failed');
      else this.logger.error({ err: error, request_id: requestId }, 'MCP request failed');
      if (reply.raw.headersSent) return;
      // X-Request-Id and the security headers were copied onto the raw response before the hijack.
      const headers = { 'content-type': 'application/json' };
      if (dependency) {
        reply.raw.writeHead(503, { ...headers, 'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS) });
        const data = { code: 'service_unavailable', request_id: requestId };
        reply.raw.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: DEPENDENCY_UNAVAILABLE_DETAIL[dependency], data }, id: null }),
        );
      } else {
        reply.raw.writeHead(500, headers);
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  }
}
