import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import '../auth/identity.js';
import type { Metrics } from '../metrics/metrics.js';

/** Accept a caller's X-Request-Id only when it is short and plain, so it is safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Requests that have arrived and not yet been answered, so a shutdown can wait for them. */
export class InFlightRequests {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  started(): void {
    this.count++;
  }

  finished(): void {
    this.count--;
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when none is left, or after `timeoutMs` (true when drained). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/**
 * What runs around every request, kept to two cheap hooks: echo the request id, then after the
 * response one JSON log line (no headers, no query string, no body: nothing secret can leak)
 * and one histogram observation.
 */
export function registerRequestHooks(fastify: FastifyInstance, logger: Logger, metrics: Metrics, inFlight: InFlightRequests): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    inFlight.started();
    // 'close' fires for every request, answered or aborted, exactly once.
    reply.raw.once('close', () => inFlight.finished());
    void reply.header('x-request-id', request.id);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? null;
    const seconds = reply.elapsedTime / 1000;
    metrics.requestDuration.observe({ method: request.method, route: route ?? '<unmatched>', status: reply.statusCode }, seconds);
    logger.info(
      {
        request_id: request.id,
        method: request.method,
        route,
        path: request.url.split('?', 1)[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        customer: request.identity?.customerId ?? null,
        identity: request.identity?.kind ?? null,
      },
      'request',
    );
    done();
  });
}
