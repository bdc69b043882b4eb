import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, send } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('failed authentications per client IP', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({ AUTHENTICATION_FAILURES_PER_IP_PER_MINUTE: '3' });
  });
  afterAll(() => api.close());

  it('turns 401s into 429s once an IP has failed too often this minute, and lets valid credentials through', async () => {
    const workspace = await createWorkspace(api);
    const { key } = await createApiKey(api, workspace);
    const jwt = (await login(api, await createUser(api, workspace))).access;
    const guess = () => api.request('/api/v1/audiences/', { headers: apiKeyHeader('abcdefgh.0123456789abcdef0123456789abcdef') });
    for (let attempt = 0; attempt < 3; attempt++) expect((await guess()).status).toBe(401);

    const throttled = await guess();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await throttled.json()) as { code: string }).code).toBe('throttled');
    // A missing credential is a failure too.
    expect((await api.request('/api/v1/audiences/')).status).toBe(429);

    // Only failures are refused: the same IP with a valid key or token is served.
    expect((await api.request('/api/v1/audiences/', { headers: apiKeyHeader(key) })).status).toBe(200);
    expect((await api.request('/api/v1/audiences/', { headers: bearer(jwt) })).status).toBe(200);

    api.clock.advance(61_000);
    expect((await guess()).status).toBe(401);
  });

  it('counts the 401s of the token refresh and verify endpoints and of the web session refresh against the same budget', async () => {
    for (const attempt of [
      () => api.request('/api/v1/jwt/verify/', json({ token: 'not-a-token' })),
      () => api.request('/api/v1/jwt/refresh/', json({ refresh: 'not-a-token' })),
      () =>
        api.request('/app/session/refresh', {
          method: 'POST',
          headers: { 'x-requested-with': 'fetch', cookie: 'audience_session=not-a-token' },
        }),
    ]) {
      api.clock.advance(61_000);
      for (let failure = 0; failure < 3; failure++) expect((await attempt()).status).toBe(401);
      const throttled = await attempt();
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('does not count public routes or successful requests', async () => {
    api.clock.advance(61_000);
    for (let attempt = 0; attempt < 10; attempt++) expect((await api.request('/healthz')).status).toBe(200);
    expect((await api.request('/api/v1/audiences/')).status).toBe(401);
  });
});

describe('login throttling an attacker cannot turn against the account owner', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({
      LOGIN_FAILURES_PER_EMAIL_AND_IP: '3',
      LOGIN_FAILURES_PER_EMAIL: '1000',
      LOGIN_FAILURES_PER_IP: '1000',
      LOGIN_FAILURE_WINDOW_SECONDS: '600',
    });
  });
  afterAll(() => api.close());

  it('locks one email for the client that failed, and counts per email and IP', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await api.request('/api/v1/jwt/create/', json({ email: user.email, password: 'wrong' }))).status).toBe(401);
    }
    const locked = await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }));
    expect(locked.status).toBe(429);
    // Another account from the same client is not affected by this email's failures.
    const other = await createUser(api, workspace);
    expect((await api.request('/api/v1/jwt/create/', json({ email: other.email, password: other.password }))).status).toBe(200);
    // Letter case and spaces do not make a fresh email.
    const shouted = await api.request('/api/v1/jwt/create/', json({ email: ` ${user.email.toUpperCase()} `, password: user.password }));
    expect(shouted.status).toBe(429);
  });
});

describe('personal MCP tokens per user', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({ MCP_TOKENS_PER_USER: '2' });
  });
  afterAll(() => api.close());

  it('refuses a token beyond the cap with 409, counting only usable ones, per user', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    let jwt = (await login(api, user)).access;
    const create = (name: string, days?: number) =>
      api.request('/api/v1/mcp-tokens/', json(days === undefined ? { name } : { name, expires_in_days: days }, bearer(jwt)));
    const first = (await (await create('one')).json()) as { id: number };
    expect((await create('two', 1)).status).toBe(201);

    const refused = await create('three');
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { code: string; detail: string }).detail).toMatch(/already hold 2 usable MCP tokens/);

    // Another user of the same workspace has a cap of their own.
    const colleague = (await login(api, await createUser(api, workspace))).access;
    expect((await api.request('/api/v1/mcp-tokens/', json({ name: 'theirs' }, bearer(colleague)))).status).toBe(201);

    // A revoked token and an expired one no longer count.
    expect((await api.request(`/api/v1/mcp-tokens/${first.id}/`, send('DELETE', undefined, bearer(jwt)))).status).toBe(204);
    expect((await create('three again')).status).toBe(201);
    api.clock.advance(2 * 86_400_000);
    jwt = (await login(api, user)).access;
    expect((await create('four')).status).toBe(201);
    expect((await create('five')).status).toBe(409);
  });
});
