import { bearer, createUser, createWorkspace, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('operations endpoints', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('answers /healthz without credentials', async () => {
    const response = await api.request('/healthz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with the database check', async () => {
    const response = await api.request('/readyz/');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });

  it('exposes Prometheus metrics with the request histogram and pool gauges', async () => {
    await api.request('/healthz');
    const response = await api.request('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/http_request_duration_seconds_bucket\{.*method="GET".*route="\/healthz".*status="200".*\}/);
    expect(text).toMatch(/^db_pool_connections \d+$/m);
    expect(text).toContain('db_pool_requests_waiting');
    expect(text).toMatch(/^build_info\{version="\d+\.\d+\.\d+",node="v\d+\.\d+\.\d+"\} 1$/m);
  });

  it('keeps to the Prometheus naming rules promtool checks: no gauge named like a counter', async () => {
    const text = await (await api.request('/metrics')).text();
    const gauges = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((match) => match[1]);
    expect(gauges.length).toBeGreaterThan(0);
    expect(gauges.filter((name) => name!.endsWith('_total'))).toEqual([]);
  });

  it('counts credential-cache hits, misses and invalidations, and times pool checkouts', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    const tokens = await login(api, user);
    const before = await scrape();
    for (let index = 0; index < 3; index++) await api.request('/api/v1/users/me/', { headers: bearer(tokens.access) });
    await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(tokens.access) });
    const after = await scrape();
    // The first request loads the session (a miss), the next two are hits; logout invalidates it.
    expect(after.credential_cache_misses_total! - before.credential_cache_misses_total!).toBeGreaterThanOrEqual(1);
    expect(after.credential_cache_hits_total! - before.credential_cache_hits_total!).toBeGreaterThanOrEqual(2);
    expect(after.credential_cache_invalidations_total! - before.credential_cache_invalidations_total!).toBeGreaterThanOrEqual(1);
    expect(after.db_pool_acquire_seconds_count!).toBeGreaterThan(before.db_pool_acquire_seconds_count!);
  });

  /** The unlabelled samples of /metrics, by name. */
  async function scrape(): Promise<Record<string, number>> {
    const text = await (await api.request('/metrics')).text();
    return Object.fromEntries(
      text
        .split('\n')
        .map((line) => /^([a-z_]+) ([\d.e+-]+)$/.exec(line))
        .filter((match) => match !== null)
        .map((match) => [match[1], Number(match[2])]),
    );
  }
});

describe('/metrics is not public in production', () => {
  it('needs the METRICS_TOKEN bearer token when one is set', async () => {
    const api = await startTestApp({ METRICS_TOKEN: 'metrics-token-0123456789' });
    try {
      const anonymous = await api.request('/metrics');
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect((await api.request('/metrics', { headers: { authorization: 'Bearer metrics-token-wrong-0000' } })).status).toBe(401);
      const scraped = await api.request('/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('http_request_duration_seconds');
    } finally {
      await api.close();
    }
  });

  it('answers 404 in production when no METRICS_TOKEN is set', async () => {
    const api = await startTestApp({ NODE_ENV: 'production', ALLOWED_HOSTS: '127.0.0.1' });
    try {
      const response = await api.request('/metrics');
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    } finally {
      await api.close();
    }
  });
});
