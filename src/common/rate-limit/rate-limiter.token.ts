/** Injection token of the RateLimiter (memory, or Redis when REDIS_URL is set). */
export const RATE_LIMITER = Symbol('RATE_LIMITER');
