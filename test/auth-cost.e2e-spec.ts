import type { CredentialCache } from '../src/common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../src/common/credential-cache/credential-cache.token.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login } from './support/factories.js';
import { StatementRecorder } from './support/statement-recorder.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('what authentication costs per request', () => {
  let api: TestApp;
  const counter = new StatementRecorder();

  beforeAll(async () => {
    api = await startTestApp({}, { dataSourceOverrides: { logging: ['query'], logger: counter } });
    // Until the credential cache's LISTEN connection is up, every check queries (by design).
    const cache = api.app.get<CredentialCache>(CREDENTIAL_CACHE);
    for (let attempt = 0; attempt < 100 && !cache.isListening; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cache.isListening).toBe(true);
  });
  afterAll(() => api.close());

  /**
   * Creating a key or a session NOTIFYs the cache (by design); a notification that lands while the
   * first request's lookup is in flight makes the cache decline to keep that answer. Waiting for
   * the NOTIFY to arrive first keeps "one query cold, none warm" deterministic on a busy machine.
   */
  const notificationsDelivered = () => new Promise((resolve) => setTimeout(resolve, 250));

  async function statementsOf(request: () => Promise<Response>): Promise<string[]> {
    counter.statements = [];
    const response = await request();
    expect(response.status).toBe(200);
    return counter.statements;
  }

  it('a JWT costs one query on first use of its session and none after', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    const { access } = await login(api, user);
    await notificationsDelivered();
    const list = () => api.request('/api/v1/audiences/', { headers: bearer(access) });
    const cold = await statementsOf(list);
    const warm = await statementsOf(list);
    const auth = cold.filter((sql) => sql.includes('auth_sessions'));
    expect(auth).toHaveLength(1);
    expect(warm.filter((sql) => sql.includes('auth_sessions'))).toHaveLength(0);
    // What remains is the list itself: one statement, page and count together.
    expect(warm).toHaveLength(cold.length - 1);
  });

  it('an API key costs one query on first use and none after (last_used_at is written at most once a minute)', async () => {
    const workspace = await createWorkspace(api);
    const { key } = await createApiKey(api, workspace);
    await notificationsDelivered();
    const list = () => api.request('/api/v1/audiences/', { headers: apiKeyHeader(key) });
    const cold = await statementsOf(list);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const warm = await statementsOf(list);
    expect(cold.filter((sql) => sql.includes('"api_keys"') && sql.startsWith('SELECT'))).toHaveLength(1);
    expect(warm.filter((sql) => sql.includes('api_keys'))).toHaveLength(0);
  });

  it('a logout is seen by the very next request', async () => {
    const workspace = await createWorkspace(api);
    const { access } = await login(api, await createUser(api, workspace));
    expect((await api.request('/api/v1/audiences/', { headers: bearer(access) })).status).toBe(200);
    expect((await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(access) })).status).toBe(204);
    expect((await api.request('/api/v1/audiences/', { headers: bearer(access) })).status).toBe(401);
    expect((await api.request('/api/v1/jwt/create/', json({}))).status).toBe(400);
  });
});
