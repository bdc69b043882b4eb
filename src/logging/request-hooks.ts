import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Identity } from '../common/access/identity.js';
import type { Metrics } from '../metrics/metrics.js';
import { REQUEST_ID_PATTERN } from '../common/http/request-id.js';
import { requestLineLogger } from './logger.js';

/** Accept a caller's X-Request-Id only when it is short and plain, so it is safe in logs and headers. */
const SANE_REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Requests that have arrived and not yet been answered, so a shutdown can wait for them and make
 * each of their responses the last on its connection.
 *
 * A count and one shared `close` listener, not a set of the requests: holding each in-flight
 * reply (or response) in a set made each scavenge keep about twice as much of the young heap alive
 * and promote about three times as much (signal detail under load, 2026-11-29, `--trace-gc-nvp`:
 * 770–980 KB survived and 590–810 KB promoted per scavenge, 2.0–2.8 ms each; with the count 390 KB
 * and 205 KB, 1.45 ms; docs/benchmarks.md). The `Connection: close` of a shutdown goes on in the
 * onSend hook instead, which every answer still to be sent passes.
 */
export class InFlightRequests {
  private count = 0;
  private readonly waiters: (() => void)[] = [];
  private closingNow = false;
  /** 'close' fires for every response, answered or aborted, exactly once. */
  private readonly onClose = (): void => {
    this.count -= 1;
    if (this.count === 0 && this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
  };

  /** True once the server drains: every answer from then on ends its connection. */
  get closing(): boolean {
    return this.closingNow;
  }

  started(reply: FastifyReply): void {
    this.count += 1;
    reply.raw.on('close', this.onClose);
  }

  /**
   * From now on every answer carries `Connection: close`, those of the requests already in flight
   * included, so no client sends another request on a connection that is about to be closed.
   */
  beginClosing(): void {
    this.closingNow = true;
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
 * What runs around every request, kept cheap: on arrival, echo the request id and count the
 * request in flight; before the answer goes out, `Connection: close` while the server drains;
 * after the response, one JSON log line (no headers, no query string, no body: nothing secret can
 * leak) and one histogram observation.
 */
export function registerRequestHooks(fastify: FastifyInstance, serviceLogger: Logger, metrics: Metrics, inFlight: InFlightRequests): void {
  const logger = requestLineLogger(serviceLogger);
  fastify.addHook('onRequest', (request, reply, done) => {
    inFlight.started(reply);
    void reply.header('x-request-id', request.id);
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    // The server is draining: this answer ends its connection (Node closes it once the answer is out).
    if (inFlight.closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? null;
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1000;
    metrics.requestDuration.observe({ method: request.method, route: route ?? '<unmatched>', status }, seconds);
    const identity = request.identity;
    const line = {
      request_id: request.id,
      method: request.method,
      route,
      path: request.url.split('?', 1)[0],
      status,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      customer: identity?.customerId ?? null,
      identity: identity?.kind ?? null,
      // Which user, key or token (its id, never the secret), and the client as the trusted proxies resolve it.
      identity_id: identity === undefined ? null : identityIdOf(identity),
      ip: request.ip,
    };
    // A 5xx is the service's fault: at error, so it stands out at LOG_LEVEL=warn too.
    if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
    done();
  });
}

function identityIdOf(identity: Identity): number {
  if (identity.kind === 'api_key') return identity.apiKeyId;
  if (identity.kind === 'mcp_token') return identity.mcpTokenId;
  return identity.userId;
}
