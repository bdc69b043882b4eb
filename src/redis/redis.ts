import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';

export const REDIS = Symbol('REDIS');

/**
 * The shared Redis connection when REDIS_URL is set, else null (counters then stay in memory).
 * Commands fail fast instead of queueing while Redis is away, so a Redis outage shows in
 * /readyz and never stalls requests.
 */
export function createRedis(url: string | undefined): Redis | null {
  if (!url) return null;
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Connection errors are reported by /readyz; without a listener ioredis would print them.
  redis.on('error', () => {});
  return redis;
}

/** Closes the shared connection once the application has shut down (its requests drained), as the container opened it. */
@Injectable()
export class RedisShutdown implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  onApplicationShutdown(): void {
    this.redis?.disconnect();
  }
}
