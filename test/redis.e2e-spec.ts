import { Redis } from 'ioredis';
import { bearer, createUser, createWorkspace, json, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const redisUrl = process.env.TEST_REDIS_URL;

/**
 * With REDIS_URL set, rate-limit counters live in Redis so that several instances share them
 * (SPEC section 8), and /readyz checks Redis. Runs where a Redis is given (CI sets TEST_REDIS_URL
 * when one answers on 127.0.0.1:6379); there is no embedded Redis to fall back on.
 */
const describeWithRedis = redisUrl ? describe : describe.skip;

describeWithRedis('with Redis', () => {
  const prefix = `audience-platform-test-${process.env.TEST_RUN_ID ?? Date.now()}:`;
  let first: TestApp;
  let second: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const env = { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '5' };
    first = await startTestApp(env);
    // A second instance on the same database and Redis, as behind a load balancer.
    second = await startTestApp({ ...env, DATABASE_URL: first.databaseUrl, DATABASE_POOL_SIZE: '2' });
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await second.close();
    await first.close();
  });

  it('reports Redis in /readyz', async () => {
    const response = await first.request('/readyz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
  });

  it('shares one identity’s request budget between instances, and answers 429 with Retry-After past it', async () => {
    const workspace = await createWorkspace(first);
    const user = await createUser(first, workspace);
    const { access } = await login(first, user);
    const statuses: number[] = [];
    for (const api of [first, second, first, second, first, second]) {
      const response = await api.request('/api/v1/users/me/', { headers: bearer(access) });
      statuses.push(response.status);
      if (response.status === 429) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(((await response.json()) as { code: string }).code).toBe('throttled');
      } else {
        expect(response.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await redis.keys(`${prefix}ratelimit:*`)).not.toHaveLength(0);
  });

  it('counts failed logins in Redis too', async () => {
    const response = await second.request('/api/v1/jwt/create/', json({ email: 'nobody@example.com', password: 'wrong password' }));
    expect(response.status).toBe(401);
    expect(await redis.keys(`${prefix}ratelimit:login-failures:*`)).not.toHaveLength(0);
  });
});
