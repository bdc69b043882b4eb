import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, createUser, createWorkspace, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

interface Parameter {
  name: string;
  in: string;
  schema?: { enum?: string[] };
}

const document = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'openapi.json'), 'utf8')) as {
  paths: Record<string, { get?: { parameters?: Parameter[] } }>;
};

/** Every list operation of the committed document with the orderings it advertises. */
const ADVERTISED = Object.entries(document.paths).flatMap(([path, item]) => {
  const ordering = item.get?.parameters?.find((parameter) => parameter.in === 'query' && parameter.name === 'ordering');
  return ordering?.schema?.enum ? [{ path, orderings: ordering.schema.enum }] : [];
});

describe('advertised orderings', () => {
  let api: TestApp;
  let jwt: string;
  beforeAll(async () => {
    api = await startTestApp();
    jwt = (await login(api, await createUser(api, await createWorkspace(api), { role: 'admin' }))).access;
  });
  afterAll(() => api.close());

  it('covers every list operation', () => {
    expect(ADVERTISED.map(({ path }) => path).sort()).toEqual(
      ['/api/v1/ai-model-instances/', '/api/v1/audiences/', '/api/v1/connections/', '/api/v1/mcp-tokens/', '/api/v1/signals/'].sort(),
    );
  });

  it.each(ADVERTISED)('$path accepts every ordering it advertises, and nothing else', async ({ path, orderings }) => {
    for (const ordering of orderings) {
      const response = await api.request(`${path}?ordering=${encodeURIComponent(ordering)}`, { headers: bearer(jwt) });
      expect({ ordering, status: response.status }).toEqual({ ordering, status: 200 });
    }
    const refused = await api.request(`${path}?ordering=password_hash`, { headers: bearer(jwt) });
    expect(refused.status).toBe(400);
  });
});
