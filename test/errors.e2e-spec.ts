import { startTestApp, type TestApp } from './support/test-app.js';

const PROBLEM_KEYS = ['code', 'detail', 'request_id', 'status', 'title', 'type'];

describe('errors outside any controller', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  async function expectProblem(response: Response, status: number, code: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'about:blank', status, code });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
    expect(JSON.stringify(body)).not.toMatch(/at .+\.(js|ts):\d+|node_modules|Cannot (GET|POST)/);
    return body;
  }

  it.each(['/nope', '/api/nope/', '/api/v1/', '/api/v1/audiences-typo/', '/healthz/extra'])(
    'answers an unknown path %s with 404 not_found',
    async (path) => {
      const body = await expectProblem(await api.request(path), 404, 'not_found');
      expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
      expect(body).toMatchObject({ title: 'Not Found', detail: 'Not found.' });
    },
  );

  it('answers a wrong method on a known path with 405 and an Allow header', async () => {
    const response = await api.request('/healthz', { method: 'DELETE' });
    await expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });

  it('treats a path with and without its trailing slash alike', async () => {
    expect((await api.request('/healthz/')).status).toBe(200);
    expect((await api.request('/healthz')).status).toBe(200);
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const kept = await api.request('/nope', { headers: { 'X-Request-Id': 'client-abc.123' } });
    expect(kept.headers.get('x-request-id')).toBe('client-abc.123');
    expect(((await kept.json()) as { request_id: string }).request_id).toBe('client-abc.123');

    const replaced = await api.request('/healthz', { headers: { 'X-Request-Id': 'bad id with spaces <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const tooLong = await api.request('/healthz', { headers: { 'X-Request-Id': 'a'.repeat(200) } });
    expect(tooLong.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a path with malformed percent-encoding with 400 parse_error', async () => {
    const response = await api.request('/api/v1/audiences/%ZZ/', { headers: { 'X-Request-Id': 'bad-url.1' } });
    const body = await expectProblem(response, 400, 'parse_error');
    expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
    expect(body).toMatchObject({ title: 'Bad Request', detail: 'Malformed URL.', request_id: 'bad-url.1' });
  });

  it('answers an id longer than the router takes with 404 not_found, like any unknown id', async () => {
    const response = await api.request(`/api/v1/audiences/${'1'.repeat(300)}/`);
    const body = await expectProblem(response, 404, 'not_found');
    expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(['GET', 'HEAD', 'DELETE'])('answers %s of an unknown file under /api/docs/ with 404', async (method) => {
    const response = await api.request('/api/docs/anything', { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('allow')).toBeNull();
    if (method !== 'HEAD') await expectProblem(response, 404, 'not_found');
  });

  it('still serves Swagger UI and its files at /api/docs/', async () => {
    const page = await api.request('/api/docs/');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    const stylesheet = await api.request('/api/docs/swagger-ui.css');
    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers.get('content-type')).toContain('text/css');
    const script = await api.request('/api/docs/swagger-ui-bundle.js', { method: 'HEAD' });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
  });

  it('generates a request id when none is given', async () => {
    const response = await api.request('/healthz');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
