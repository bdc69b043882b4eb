import Fastify from 'fastify';
import type { Logger } from 'pino';
import { Metrics } from '../metrics/metrics.js';
import { InFlightRequests, registerRequestHooks } from './request-hooks.js';

describe('request hooks', () => {
  it('log a 5xx at error and anything else at info, one line per request', async () => {
    const lines: { level: string; status: unknown }[] = [];
    const record = (level: string) => (fields: Record<string, unknown>) => lines.push({ level, status: fields.status });
    const logger = { info: record('info'), error: record('error') } as unknown as Logger;
    const fastify = Fastify();
    registerRequestHooks(fastify, logger, new Metrics(() => undefined), new InFlightRequests());
    fastify.get('/ok', async () => ({ ok: true }));
    fastify.get('/unavailable', async (_request, reply) => reply.status(503).send({ down: true }));
    fastify.get('/missing', async (_request, reply) => reply.status(404).send({}));
    try {
      const base = await fastify.listen({ port: 0, host: '127.0.0.1' });
      for (const path of ['/ok', '/unavailable', '/missing']) await (await fetch(`${base}${path}`)).text();
      // onResponse runs once the response is written; give it a moment.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toEqual([
        { level: 'info', status: 200 },
        { level: 'error', status: 503 },
        { level: 'info', status: 404 },
      ]);
    } finally {
      await fastify.close();
    }
  });
});
