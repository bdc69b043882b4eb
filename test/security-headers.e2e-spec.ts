import { apiKeyHeader, createApiKey, createWorkspace, json } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('security headers', () => {
  let api: TestApp;
  let key: string;
  beforeAll(async () => {
    api = await startTestApp();
    key = (await createApiKey(api, await createWorkspace(api))).key;
  });
  afterAll(() => api.close());

  it.each([
    ['an authenticated list', '/api/v1/audiences/', true],
    ['an error', '/api/v1/audiences/999999/', true],
    ['an unauthenticated refusal', '/api/v1/signals/', false],
  ])('puts nosniff, a restrictive policy and no-store on %s', async (_case, path, authenticated) => {
    const response = await api.request(path, authenticated ? { headers: apiKeyHeader(key) } : {});
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('puts them on the answers the router gives before any hook runs', async () => {
    for (const path of ['/api/v1/audiences/%ZZ/', `/api/v1/audiences/${'1'.repeat(300)}/`]) {
      const response = await api.request(path, { headers: apiKeyHeader(key) });
      expect([400, 404]).toContain(response.status);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('keeps token responses out of caches', async () => {
    const response = await api.request('/api/v1/jwt/create/', json({ email: 'nobody@example.com', password: 'x' }));
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it.each(['/nope', '/api/nope/', '/healthz', '/readyz', '/api/schema/', '/metrics'])(
    'puts the restrictive policy and no-store on %s too, which is no page',
    async (path) => {
      const response = await api.request(path);
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get('cache-control')).toBe('no-store');
    },
  );

  it('gives Swagger UI a policy of its own: its files and this origin only, never framed', async () => {
    const response = await api.request('/api/docs/');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'self';.*frame-ancestors 'none'$/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('serves only the files Swagger UI loads under /api/docs/', async () => {
    const page = await (await api.request('/api/docs/')).text();
    for (const file of [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((match) => match[1]!)) {
      expect({ file, status: (await api.request(`/api/docs/${file}`)).status }).toEqual({ file, status: 200 });
    }
    for (const path of [
      '/api/docs/package.json',
      '/api/docs/README.md',
      '/api/docs/swagger-ui-bundle.js.map',
      '/api/docs//package.json',
      '/api/docs/index.js',
    ]) {
      const response = await api.request(path);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(await response.json()).toMatchObject({ code: 'not_found' });
    }
  });

  it('answers no CORS by default: a preflight gets no Access-Control-Allow-Origin', async () => {
    const preflight = await api.request('/api/v1/audiences/', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await api.request('/api/v1/audiences/', { headers: { origin: 'https://app.example.com', ...apiKeyHeader(key) } });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({ CORS_ORIGINS: 'https://app.example.com' });
  });
  afterAll(() => api.close());

  it('answers a preflight from an allowed origin with the methods and headers the API takes', async () => {
    const preflight = await api.request('/api/v1/audiences/', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('idempotency-key');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('exposes the response headers clients need, and nothing to other origins', async () => {
    const allowed = await api.request('/api/v1/audiences/', { headers: { origin: 'https://app.example.com' } });
    expect(allowed.status).toBe(401);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-request-id');

    const other = await api.request('/api/v1/audiences/', { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
