import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { Metrics } from '../metrics/metrics.js';
import { createLogger } from './logger.js';
import { InFlightRequests, registerRequestHooks } from './request-hooks.js';

/** A stream that keeps what the logger writes. */
function capture(): { stream: Writable; chunks: string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { stream, chunks };
}

describe('request hooks', () => {
  it('log a 5xx at error and anything else at info, one line per request, to the service logger’s destination', async () => {
    const { stream, chunks } = capture();
    const logger = createLogger({ logLevel: 'info' }, stream);
    const fastify = Fastify();
    registerRequestHooks(fastify, logger, new Metrics(() => undefined), new InFlightRequests());
    fastify.get('/ok', async () => ({ ok: true }));
    fastify.get('/unavailable', async (_request, reply) => reply.status(503).send({ down: true }));
    fastify.get('/missing', async (_request, reply) => reply.status(404).send({}));
    try {
      const base = await fastify.listen({ port: 0, host: '127.0.0.1' });
      for (const path of ['/ok', '/unavailable', '/missing']) await (await fetch(`${base}${path}?token=secret`)).text();
      // onResponse runs once the response is written; give it a moment.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const lines = chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => [line.level, line.msg, line.status, line.path])).toEqual([
        ['info', 'request', 200, '/ok'],
        ['error', 'request', 503, '/unavailable'],
        ['info', 'request', 404, '/missing'],
      ]);
      expect(lines[0]).toEqual({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        msg: 'request',
        request_id: expect.any(String),
        method: 'GET',
        route: '/ok',
        path: '/ok',
        status: 200,
        duration_ms: expect.any(Number),
        customer: null,
        identity: null,
        identity_id: null,
        ip: '127.0.0.1',
      });
      expect(chunks.join('')).not.toContain('secret');
    } finally {
      await fastify.close();
    }
  });

  it('follow the service logger’s level', async () => {
    const { stream, chunks } = capture();
    const fastify = Fastify();
    registerRequestHooks(fastify, createLogger({ logLevel: 'warn' }, stream), new Metrics(() => undefined), new InFlightRequests());
    fastify.get('/ok', async () => ({ ok: true }));
    try {
      const base = await fastify.listen({ port: 0, host: '127.0.0.1' });
      await (await fetch(`${base}/ok`)).text();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(chunks).toEqual([]);
    } finally {
      await fastify.close();
    }
  });
});
