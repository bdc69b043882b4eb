import type { ChainableCommander, Redis } from 'ioredis';
import { DependencyUnavailableError, isDependencyUnavailable } from '../errors/database-errors.js';
import type { Clock } from '../time/clock.js';

export interface RateLimitResult {
  /** Hits counted in the current window, this one included. */
  count: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

/**
 * Fixed-window counters. In memory by default; in Redis when REDIS_URL is set, so that several
 * instances share them (SPEC section 8).
 */
export interface RateLimiter {
  /** Counts a hit on `key` and returns the window's state. */
  hit(key: string, windowSeconds: number): Promise<RateLimitResult>;
  /** Reads the window's state without counting. */
  peek(key: string, windowSeconds: number): Promise<RateLimitResult>;
  reset(key: string): Promise<void>;
}

interface Window {
  count: number;
  resetAtMs: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private sweptAtMs = 0;

  constructor(private readonly clock: Clock) {}

  async hit(key: string, windowSeconds: number): Promise<RateLimitResult> {
    const window = this.current(key, windowSeconds, true)!;
    window.count += 1;
    return this.result(window);
  }

  async peek(key: string, windowSeconds: number): Promise<RateLimitResult> {
    const window = this.current(key, windowSeconds, false);
    return window ? this.result(window) : { count: 0, resetSeconds: windowSeconds };
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  private current(key: string, windowSeconds: number, create: boolean): Window | undefined {
    const now = this.clock.nowMs();
    this.sweep(now);
    let window = this.windows.get(key);
    if (window && window.resetAtMs <= now) {
      this.windows.delete(key);
      window = undefined;
    }
    if (!window && create) {
      window = { count: 0, resetAtMs: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    return window;
  }

  private result(window: Window): RateLimitResult {
    return { count: window.count, resetSeconds: Math.max(1, Math.ceil((window.resetAtMs - this.clock.nowMs()) / 1000)) };
  }

  /** Drops expired windows now and then, so memory stays bounded by the active keys. */
  private sweep(now: number): void {
    if (now - this.sweptAtMs < 60_000) return;
    this.sweptAtMs = now;
    for (const [key, window] of this.windows) if (window.resetAtMs <= now) this.windows.delete(key);
  }
}

/**
 * Counters in Redis. While Redis is away every call rejects at once (no offline queue, see
 * src/redis/redis.ts) with a DependencyUnavailableError, which the filter answers 503: a limit
 * that cannot be counted is neither waved through nor a 500 (SPEC section 8).
 */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(key: string, windowSeconds: number): Promise<RateLimitResult> {
    // INCR and set the expiry only on the window's first hit, in one round trip.
    const [count, , ttl] = await this.exec(
      this.redis
        .multi()
        .incr(this.prefix + key)
        .pexpire(this.prefix + key, windowSeconds * 1000, 'NX')
        .pttl(this.prefix + key),
    );
    return { count: Number(count ?? 1), resetSeconds: Math.max(1, Math.ceil(Number(ttl ?? windowSeconds * 1000) / 1000)) };
  }

  async peek(key: string, windowSeconds: number): Promise<RateLimitResult> {
    const [count, ttl] = await this.exec(
      this.redis
        .multi()
        .get(this.prefix + key)
        .pttl(this.prefix + key),
    );
    const milliseconds = Number(ttl ?? -1);
    return { count: Number(count ?? 0), resetSeconds: milliseconds > 0 ? Math.max(1, Math.ceil(milliseconds / 1000)) : windowSeconds };
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key).catch(rethrowAsRedisOutage);
  }

  /** The replies of a MULTI, or its first error: a failed command must not read as a count of 0. */
  private async exec(transaction: ChainableCommander): Promise<unknown[]> {
    const results = await transaction.exec().catch(rethrowAsRedisOutage);
    if (!results) throw new Error('Redis discarded the rate-limit transaction');
    for (const [error] of results) if (error) rethrowAsRedisOutage(error);
    return results.map(([, value]) => value);
  }
}

/** Names Redis as the dependency that is down, which a bare ECONNREFUSED or ETIMEDOUT would not. */
function rethrowAsRedisOutage(error: unknown): never {
  throw isDependencyUnavailable(error) ? new DependencyUnavailableError('redis', error) : error;
}
