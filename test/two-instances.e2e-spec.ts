import { runCli } from '../src/cli/commands.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, send } from './support/factories.js';
import { startTestApp, TEST_ENV, type TestApp } from './support/test-app.js';

const redisUrl = process.env.TEST_REDIS_URL;

/**
 * Two instances on one PostgreSQL (and one Redis where a test Redis is given), as behind the
 * compose file's proxy: what one instance changes, the other honours at once.
 */
describe('two instances behind one proxy', () => {
  let a: TestApp;
  let b: TestApp;
  const prefix = `audience-platform-two-${process.env.TEST_RUN_ID ?? Date.now()}:`;
  beforeAll(async () => {
    const shared: Record<string, string> = redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } : {};
    a = await startTestApp({ ...shared, RATE_LIMIT_PER_MINUTE: '8' });
    b = await startTestApp({ ...shared, RATE_LIMIT_PER_MINUTE: '8', DATABASE_URL: a.databaseUrl, DATABASE_POOL_SIZE: '3' });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  /** Asks `instance` again every 20 ms until it answers `expected` (the other instance's NOTIFY in flight), at most 2 s. */
  async function answersOn(instance: TestApp, path: string, init: RequestInit, expected: number): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    for (;;) {
      const response = await instance.request(path, init);
      await response.arrayBuffer();
      const ms = Math.round(performance.now() - started);
      if (response.status === expected || ms > 2000) return { status: response.status, ms };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('ends a session everywhere when it is logged out on one instance', async () => {
    const user = await createUser(a, await createWorkspace(a));
    const tokens = await login(a, user);
    // B has the session cached before the logout.
    expect((await b.request('/api/v1/users/me/', { headers: bearer(tokens.access) })).status).toBe(200);
    expect((await a.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(tokens.access) })).status).toBe(204);
    const access = await answersOn(b, '/api/v1/users/me/', { headers: bearer(tokens.access) }, 401);
    expect(access.status).toBe(401);
    expect(access.ms).toBeLessThan(1000);
    expect((await b.request('/api/v1/jwt/refresh/', json({ refresh: tokens.refresh }))).status).toBe(401);
  });

  it('stops an API key revoked by the operator CLI on every instance', async () => {
    const workspace = await createWorkspace(a);
    const { id, key } = await createApiKey(a, workspace);
    for (const instance of [a, b]) expect((await instance.request('/api/v1/audiences/', { headers: apiKeyHeader(key) })).status).toBe(200);
    let out = '';
    const code = await runCli(
      ['apikey', 'revoke', String(id)],
      { stdout: { write: (chunk: string) => (out += chunk) }, stderr: { write: () => undefined } },
      { ...TEST_ENV, DATABASE_URL: a.databaseUrl },
    );
    expect({ code, out: JSON.parse(out) as object }).toMatchObject({ code: 0, out: { id } });
    for (const instance of [a, b]) {
      const revoked = await answersOn(instance, '/api/v1/audiences/', { headers: apiKeyHeader(key) }, 401);
      expect(revoked.status).toBe(401);
      expect(revoked.ms).toBeLessThan(1000);
    }
  });

  it('creates one object for an idempotent POST retried on the other instance', async () => {
    const user = await createUser(a, await createWorkspace(a));
    const access = (await login(a, user)).access;
    const body = { name: `Retried ${Date.now()}`, source_type: 'rules' };
    const headers = { ...bearer(access), 'idempotency-key': `retry-${Date.now()}` };
    const first = await a.request('/api/v1/audiences/', send('POST', body, headers));
    const retried = await b.request('/api/v1/audiences/', send('POST', body, headers));
    expect([first.status, retried.status]).toEqual([201, 201]);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    const [created, replayed] = (await Promise.all([first.json(), retried.json()])) as { id: number }[];
    expect(replayed!.id).toBe(created!.id);
    const list = (await (
      await b.request(`/api/v1/audiences/?search=${encodeURIComponent(body.name)}`, { headers: bearer(access) })
    ).json()) as {
      count: number;
    };
    expect(list.count).toBe(1);
  });

  (redisUrl ? it : it.skip)('shares one identity’s request budget between the instances (Redis)', async () => {
    const user = await createUser(a, await createWorkspace(a));
    const access = (await login(a, user)).access;
    const statuses: number[] = [];
    for (let index = 0; index < 10; index++) {
      const instance = index % 2 === 0 ? a : b;
      statuses.push((await instance.request('/api/v1/users/me/', { headers: bearer(access) })).status);
    }
    // 8 a minute in all, whichever instance answers: the 9th and 10th are refused.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
  });
});
