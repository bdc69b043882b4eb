import { type CallHandler, type ExecutionContext, HttpStatus, Injectable, type NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, mergeMap, type Observable, of, throwError, catchError } from 'rxjs';
import { DataSource } from 'typeorm';
import { sha256 } from '../crypto/secret-hash.js';
import { ApiError } from '../errors/api-error.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

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
  constructor(private readonly dataSource: DataSource) {}

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
    const owner = {
      customerId: identity.customerId,
      identity: identity.kind === 'api_key' ? `api_key:${identity.apiKeyId}` : `user:${identity.userId}`,
      key: header,
    };
    const requestHash = sha256(`${request.method} ${request.url.split('?', 1)[0]}\n${canonicalJson(request.body)}`);
    const repository = this.dataSource.getRepository(IdempotencyKey);

    await repository
      .createQueryBuilder()
      .delete()
      .where('customer_id = :customerId AND identity = :identity AND key = :key', owner)
      .andWhere(`created_at < now() - interval '${RETENTION_HOURS} hours'`)
      .execute();
    const claimed = await repository
      .createQueryBuilder()
      .insert()
      .values({ ...owner, requestHash })
      .orIgnore()
      .returning(['key'])
      .execute();

    if (claimed.raw.length === 0) {
      const existing = await repository.findOneBy(owner);
      if (!existing) throw ApiError.conflict('This Idempotency-Key is being released; retry.');
      if (!existing.requestHash.equals(requestHash))
        throw ApiError.conflict('This Idempotency-Key was already used with a different request.');
      if (existing.statusCode === null) throw ApiError.conflict('A request with this Idempotency-Key is still being processed.');
      void reply.status(existing.statusCode).header('idempotent-replayed', 'true');
      return of(existing.responseBody);
    }

    const status =
      (Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler()) as number | undefined) ??
      (request.method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);
    return next.handle().pipe(
      mergeMap((body) => from(repository.update(owner, { statusCode: status, responseBody: body as object }).then(() => body))),
      catchError((error: unknown) => from(repository.delete(owner)).pipe(mergeMap(() => throwError(() => error)))),
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
