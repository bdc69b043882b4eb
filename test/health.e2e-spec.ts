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
    expect(text).toContain('db_pool_connections_total');
    expect(text).toContain('db_pool_requests_waiting');
  });
});
