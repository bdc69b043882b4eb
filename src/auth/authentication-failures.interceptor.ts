import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  UseInterceptors,
  applyDecorators,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { catchError, defer, type Observable } from 'rxjs';
import { PublicLimitedByIp } from '../common/access/access.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { RequestRateLimit } from './request-rate-limit.js';

/**
 * A public route that answers 401 itself (a refresh or verify of a token: the credential is in
 * the body, so the guard never sees it) spends the client IP's failure budget like a 401 of the
 * guard does, and past it answers 429 (SPEC section 8): otherwise these routes were a free
 * oracle for guessing tokens. Route-scoped, so no other request goes through an interceptor.
 */
@Injectable()
export class AuthenticationFailuresInterceptor implements NestInterceptor {
  constructor(private readonly rateLimit: RequestRateLimit) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return next.handle().pipe(
      catchError((error: unknown) =>
        defer(async () => {
          if (error instanceof ApiError && error.statusCode === 401) await this.rateLimit.consumeFailure(`ip:${request.ip}`);
          throw error;
        }),
      ),
    );
  }
}

/** A public route limited by IP whose own 401s count as failed authentications of that IP. */
export const PublicCountingFailures = () => applyDecorators(PublicLimitedByIp(), UseInterceptors(AuthenticationFailuresInterceptor));
