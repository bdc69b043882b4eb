import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, mergeMap, type Observable, of, throwError, catchError } from 'rxjs';
import { sha256 } from '../common/crypto/secret-hash.js';
import { ApiError } from '../common/errors/api-error.js';
import { type IdempotencyKeyOwner, IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** Route metadata: the success status that a replay repeats (set by `@Idempotent()`). */
export const IDEMPOTENT_STATUS = 'idempotency:status';
const HEADER = 'idempotency-key';
const RETENTION_HOURS = 24;

/**
 * `Idempotency-Key` on POST (SPEC section 8). The key is claimed with one INSERT … ON CONFLICT
 * DO NOTHING before the handler runs, so two concurrent retries cannot both create. A retry with
 * the same key and request gets the stored response; the same key with a different request, or
 * while the first is still running, is a 409. A failed request releases its key, so a corrected
 * retry can use it. Keys are per identity and kept 24 hours.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const header = request.headers[HEADER];
    if (header === undefined) return next.handle();
    if (typeof header !== 'string' || header.length < 1 || header.length > 255) {
      throw ApiError.field('Idempotency-Key', 'Must be 1 to 255 characters.');
    }
    const identity = request.identity;
    if (!identity) return next.handle();
    const owner: IdempotencyKeyOwner = {
      customerId: identity.customerId,
      identity: identity.kind === 'api_key' ? `api_key:${identity.apiKeyId}` : `user:${identity.userId}`,
      key: header,
    };
    const requestHash = sha256(`${request.method} ${request.url.split('?', 1)[0]}\n${canonicalJson(request.body)}`);

    await this.keys.deleteExpired(owner, RETENTION_HOURS);
    if (!(await this.keys.claim(owner, requestHash))) {
      const existing = await this.keys.find(owner);
      if (!existing) throw ApiError.conflict('This Idempotency-Key is being released; retry.');
      if (!existing.requestHash.equals(requestHash))
        throw ApiError.conflict('This Idempotency-Key was already used with a different request.');
      if (existing.statusCode === null) throw ApiError.conflict('A request with this Idempotency-Key is still being processed.');
      void reply.status(existing.statusCode).header('idempotent-replayed', 'true');
      return of(existing.responseBody);
    }

    const status = this.reflector.get<number>(IDEMPOTENT_STATUS, context.getHandler());
    return next.handle().pipe(
      mergeMap((body) => from(this.keys.complete(owner, status, body).then(() => body))),
      catchError((error: unknown) => from(this.keys.release(owner)).pipe(mergeMap(() => throwError(() => error)))),
    );
  }
}

/** JSON with sorted keys, so the same body in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
