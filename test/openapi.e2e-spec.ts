import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startTestApp, type TestApp } from './support/test-app.js';

const COMMITTED = fileURLToPath(new URL('../openapi.json', import.meta.url));

/**
 * The committed openapi.json is the API's contract under review: when code and document differ,
 * this fails. Regenerate with `npm run openapi:update` and commit the diff with the change.
 */
describe('OpenAPI document', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('is served at /api/schema/ and equals the committed openapi.json', async () => {
    const response = await api.request('/api/schema/');
    expect(response.status).toBe(200);
    const served = await response.json();
    const text = `${JSON.stringify(served, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') await writeFile(COMMITTED, text);
    const committed = JSON.parse(await readFile(COMMITTED, 'utf8').catch(() => '{}'));
    expect(served).toEqual(committed);
  });

  it('is an OpenAPI 3 document with the problem+json schema', async () => {
    const document = (await (await api.request('/api/schema')).json()) as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toMatch(/^3\./);
    expect(document.components.schemas.ProblemDetailsDto).toBeDefined();
  });

  it('serves Swagger UI at /api/docs/', async () => {
    const response = await api.request('/api/docs/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('swagger-ui');
  });
});
