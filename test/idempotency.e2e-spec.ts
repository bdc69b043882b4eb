import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('Idempotency-Key on POST (SPEC section 8)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace))).access);
  });
  afterAll(() => api.close());

  const create = (body: unknown, key: string | undefined, headers = auth) =>
    api.request('/api/v1/audiences/', send('POST', body, key === undefined ? headers : { ...headers, 'idempotency-key': key }));
  const countNamed = async (name: string) =>
    Number(
      (
        await api.dataSource.query('SELECT count(*) AS n FROM audiences WHERE customer_id = $1 AND name = $2', [workspace.customerId, name])
      )[0].n,
    );

  it('replays the first response for a retry with the same key and body, creating nothing', async () => {
    const first = await create({ name: 'Once', source_type: 'rules' }, 'key-1');
    expect(first.status).toBe(201);
    const firstBody = await first.json();
    const retry = await create({ source_type: 'rules', name: 'Once' }, 'key-1');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(firstBody);
    expect(await countNamed('Once')).toBe(1);
  });

  it('answers 409 for the same key with a different body', async () => {
    expect((await create({ name: 'Twice A', source_type: 'rules' }, 'key-2')).status).toBe(201);
    const response = await create({ name: 'Twice B', source_type: 'rules' }, 'key-2');
    expect(response.status).toBe(409);
    expect(((await response.json()) as { code: string }).code).toBe('conflict');
    expect(await countNamed('Twice B')).toBe(0);
  });

  it('lets two concurrent requests with one key create one object', async () => {
    const responses = await Promise.all([1, 2, 3].map(() => create({ name: 'Racing', source_type: 'rules' }, 'key-race')));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(await countNamed('Racing')).toBe(1);
  });

  it('releases the key when the request fails, so a corrected retry works', async () => {
    expect((await create({ name: '', source_type: 'rules' }, 'key-3')).status).toBe(400);
    expect((await create({ name: 'Corrected', source_type: 'rules' }, 'key-3')).status).toBe(201);
  });

  it('keeps keys per identity', async () => {
    const { key } = await createApiKey(api, workspace);
    expect((await create({ name: 'Per identity', source_type: 'rules' }, 'shared-key')).status).toBe(201);
    const other = await create({ name: 'Per identity 2', source_type: 'rules' }, 'shared-key', apiKeyHeader(key));
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a key longer than 255 characters, and works without a key', async () => {
    expect((await create({ name: 'Long key', source_type: 'rules' }, 'k'.repeat(256))).status).toBe(400);
    expect((await create({ name: 'No key', source_type: 'rules' }, undefined)).status).toBe(201);
  });
});
