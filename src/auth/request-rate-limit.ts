import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import type { RateLimiter } from '../common/rate-limit/rate-limiter.js';
import { RATE_LIMITER } from '../common/rate-limit/rate-limiter.token.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';

const WINDOW_SECONDS = 60;

/**
 * Requests per identity (or per client IP on the token endpoints) per minute, announced with the
 * IETF RateLimit header fields on every counted response (SPEC section 8).
 */
@Injectable()
export class RequestRateLimit {
  private readonly policy: string;

  constructor(
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.policy = `"default";q=${config.rateLimitPerMinute};w=${WINDOW_SECONDS}`;
  }

  /**
   * Counts a failed authentication of `key` (a client IP); past the configured budget per minute
   * the failure is answered 429 instead of 401.
   */
  async consumeFailure(key: string): Promise<void> {
    const { count, resetSeconds } = await this.limiter.hit(`authentication-failures:${key}`, WINDOW_SECONDS);
    if (count > this.config.authenticationFailuresPerIpPerMinute) {
      throw new ApiError(429, 'throttled', `Too many failed authentications. Try again in ${resetSeconds} seconds.`, undefined, {
        'retry-after': String(resetSeconds),
      });
    }
  }

  async consume(key: string, reply: FastifyReply): Promise<void> {
    const limit = this.config.rateLimitPerMinute;
    const { count, resetSeconds } = await this.limiter.hit(`requests:${key}`, WINDOW_SECONDS);
    void reply.header('ratelimit-policy', this.policy);
    void reply.header('ratelimit', `"default";r=${Math.max(0, limit - count)};t=${resetSeconds}`);
    if (count > limit) {
      throw new ApiError(
        429,
        'throttled',
        `Request limit of ${limit} per minute reached. Try again in ${resetSeconds} seconds.`,
        undefined,
        {
          'retry-after': String(resetSeconds),
        },
      );
    }
  }
}
