import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { McpOnly } from '../auth/access.decorators.js';
import { LOGGER } from '../logging/logger.token.js';
import { McpServerFactory } from './mcp-server.factory.js';

/**
 * Streamable HTTP MCP endpoint (SPEC section 7), stateless: a fresh server and transport per
 * request, no session ids. Only POST exists, so GET and DELETE answer 405 like any other route.
 * JSON-RPC is not REST, so it stays out of the OpenAPI document; the README describes the tools.
 */
@ApiExcludeController()
@McpOnly()
@Controller('mcp')
export class McpController {
  constructor(
    private readonly servers: McpServerFactory,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post()
  async handle(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const server = this.servers.create(request.identity!);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The SDK writes the response itself; Fastify must not send one of its own.
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      this.logger.error({ err: error, request_id: request.id }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json', 'x-request-id': String(request.id) });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  }
}
