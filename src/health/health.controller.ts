import { Controller, Get, Header, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { Public } from '../auth/access.decorators.js';
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

  @Get('metrics')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  async prometheus(@Res({ passthrough: true }) reply: FastifyReply) {
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
