import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, createUser, createWorkspace, login, send } from './support/factories.js';
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
  /** The `{id}` of a sub-collection's path: an audience of the workspace (its members are a list), or a webhook (its deliveries). */
  let audience: number;
  /** The `{id}` of a signal's events: a signal of the workspace. */
  let signal: number;
  let webhook: number;
  beforeAll(async () => {
    api = await startTestApp();
    jwt = (await login(api, await createUser(api, await createWorkspace(api), { role: 'admin' }))).access;
    const created = await api.request('/api/v1/audiences/', send('POST', { name: 'Orderings', source_type: 'upload' }, bearer(jwt)));
    audience = ((await created.json()) as { id: number }).id;
    const draft = await api.request('/api/v1/signals/', send('POST', { name: 'Orderings', signal_type: 'conversion' }, bearer(jwt)));
    signal = ((await draft.json()) as { id: number }).id;
    const hook = await api.request(
      '/api/v1/webhooks/',
      send('POST', { url: 'http://127.0.0.1:9/hook', events: ['sync.failed'] }, bearer(jwt)),
    );
    webhook = ((await hook.json()) as { id: number }).id;
  });
  afterAll(() => api.close());

  it('covers every list operation', () => {
    expect(ADVERTISED.map(({ path }) => path).sort()).toEqual(
      [
        '/api/v1/ai-model-instances/',
        '/api/v1/audiences/',
        '/api/v1/audiences/{id}/members/',
        '/api/v1/connections/',
        '/api/v1/imports/',
        '/api/v1/mcp-tokens/',
        '/api/v1/people/',
        '/api/v1/signals/',
        '/api/v1/syncs/',
        '/api/v1/signals/{id}/events/',
        '/api/v1/webhooks/',
        '/api/v1/webhooks/{id}/deliveries/',
      ].sort(),
    );
  });

  it.each(ADVERTISED)('$path accepts every ordering it advertises, and nothing else', async ({ path: template, orderings }) => {
    const owner = template.startsWith('/api/v1/signals/') ? signal : template.startsWith('/api/v1/webhooks/') ? webhook : audience;
    const path = template.replace('{id}', String(owner));
    for (const ordering of orderings) {
      const response = await api.request(`${path}?ordering=${encodeURIComponent(ordering)}`, { headers: bearer(jwt) });
      expect({ ordering, status: response.status }).toEqual({ ordering, status: 200 });
    }
    const refused = await api.request(`${path}?ordering=password_hash`, { headers: bearer(jwt) });
    expect(refused.status).toBe(400);
  });
});
