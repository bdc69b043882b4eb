import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, HttpCode, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { Public } from '../common/access/access.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { DatabaseHealth } from '../database/database-health.js';
import { Metrics } from '../metrics/metrics.js';
import { REDIS } from '../redis/redis.js';

const CHECK_TIMEOUT_MS = 2000;

/** Liveness, readiness and Prometheus metrics for orchestrators (SPEC section 9). Outside the API, so not in its document. */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly metrics: Metrics,
    @Inject(REDIS) private readonly redis: Redis | null,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The process is up and serving HTTP; says nothing about its dependencies. */
  @Get('healthz')
  liveness() {
    return { status: 'ok' };
  }

  /** Ready to serve: PostgreSQL (and Redis when configured) answer. 503 otherwise, 200 again once they are back. */
  @Get('readyz')
  async readiness(@Res({ passthrough: true }) reply: FastifyReply) {
    const checks: Record<string, 'ok' | 'unavailable'> = { database: await this.check(() => this.database.ping()) };
    if (this.redis) checks.redis = await this.check(() => this.redis!.ping());
    const ready = Object.values(checks).every((state) => state === 'ok');
    void reply.status(ready ? 200 : 503);
    return { status: ready ? 'ok' : 'unavailable', checks };
  }

  /**
   * Prometheus metrics, never public in production (SPEC section 9): with METRICS_TOKEN set they
   * need `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time); in production
   * without one the route answers 404, as if it did not exist; elsewhere it is open for local use.
   */
  @Get('metrics')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  async prometheus(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const token = this.config.metricsToken;
    if (token === undefined && this.config.nodeEnv === 'production') throw ApiError.notFound();
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      throw new ApiError(401, 'not_authenticated', 'GET /metrics needs the METRICS_TOKEN bearer token.', undefined, {
        'www-authenticate': 'Bearer realm="metrics"',
      });
    }
    void reply.type(this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }

  private async check(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([probe(), timeout]);
      return 'ok';
    } catch {
      return 'unavailable';
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Whether `header` is `Bearer <expected>`, compared by digest in constant time. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(expected));
}
