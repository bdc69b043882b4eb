import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from '../errors/api-error.js';
import { problemBody } from '../errors/problem-body.js';
import { securityHeadersFor } from './security-headers.js';

/** Node reads at most this much request head (its default, --max-http-header-size). */
const MAX_HEADER_KIB = 16;

/**
 * Node answers requests it cannot parse or that arrive too slowly itself, before Fastify or any
 * hook sees them (Fastify's `clientErrorHandler`). These answers keep the problem+json shape of
 * SPEC section 5 with a request id and the security headers every answer carries. SPEC's code
 * table has no code of its own for 408 and 431, so they take the nearest one a client already
 * handles (`parse_error`, `payload_too_large`) rather than a new member of the documented enum.
 */
export function answerClientError(requestTimeoutMs: number): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has nobody to answer (Node's own handler does the same).
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, detail] = describe(error.code, requestTimeoutMs);
    const requestId = randomUUID();
    const body = JSON.stringify(problemBody(status, code, detail, requestId));
    const headers = {
      ...securityHeadersFor('/'),
      'Content-Type': 'application/problem+json',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
      Connection: 'close',
    };
    if (socket.writable) {
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`HTTP/1.1 ${status} ${problemBody(status, code, detail, requestId).title}\r\n${head}\r\n${body}`);
    }
    socket.destroy(error);
  };
}

function describe(code: string | undefined, requestTimeoutMs: number): [number, ErrorCode, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'parse_error', `The request was not received completely within ${requestTimeoutMs / 1000} s.`];
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'payload_too_large', `The request headers are larger than ${MAX_HEADER_KIB} KiB.`];
  return [400, 'parse_error', 'Malformed HTTP request.'];
}

/**
 * A request's body must arrive within `deadlineMs` of its head (which Node bounds itself, with its
 * headersTimeout): a body trickling in is answered 408 and its connection closed, as Node's own
 * requestTimeout would. Ours rather than Node's because Node's covers every request alike, while a
 * streamed upload (`@RouteConfig({ streamBody: true })`, imports) may take as long as its size
 * needs and is bounded by its own idle timeout instead. Requests without a body start no timer.
 */
export function registerBodyDeadline(fastify: FastifyInstance, deadlineMs: number): void {
  const answer = answerClientError(deadlineMs);
  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    const length = raw.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined;
    if (!hasBody || raw.complete || (request.routeOptions.config as { streamBody?: boolean } | undefined)?.streamBody === true)
      return done();
    const timer = setTimeout(() => {
      // Answered already (say a 401 before the body was read): Node ends that connection itself.
      if (raw.complete || reply.raw.headersSent) return;
      answer(Object.assign(new Error('Request body timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), raw.socket);
    }, deadlineMs);
    const stop = () => clearTimeout(timer);
    raw.once('end', stop);
    raw.once('close', stop);
    // Answered before its body was read (a 413, a parse error found early, a refusal): the deadline
    // has nothing left to guard, and the timer would otherwise be held until it ran out (issue 25,
    // item 19: held past the app's close, it kept test workers from exiting).
    reply.raw.once('close', stop);
    done();
  });
}
