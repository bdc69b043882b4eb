import {
  bearer,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  login,
  send,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const TABLES = ['audiences', 'signals', 'ai_model_instances', 'connections'];

/** The list `count` of an unfiltered or status-filtered list comes from trigger-kept counters; they must never drift. */
describe('tenant_counts', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace))).access);
  });
  afterAll(() => api.close());

  async function expectCountersExact() {
    const actual: { customer_id: number; resource: string; status: string; count: string }[] = await api.dataSource.query(
      TABLES.map(
        (table) =>
          `SELECT customer_id, '${table}' AS resource, status::text AS status, count(*)::text AS count FROM ${table} GROUP BY 1, 2, 3`,
      ).join(' UNION ALL '),
    );
    const kept: { customer_id: number; resource: string; status: string; count: string }[] = await api.dataSource.query(
      'SELECT customer_id, resource, status, count::text AS count FROM tenant_counts WHERE count <> 0',
    );
    const key = (row: { customer_id: number; resource: string; status: string; count: string }) =>
      `${row.customer_id}/${row.resource}/${row.status}=${row.count}`;
    expect(kept.map(key).sort()).toEqual(actual.map(key).sort());
  }

  it('stay exact through creates, status changes, deletes, cascades and bulk SQL', async () => {
    const connection = await createConnection(api, workspace, { status: 'active' });
    await createModelInstance(api, workspace);
    const signals: number[] = [];
    for (let index = 0; index < 6; index++) {
      const response = await api.request(
        '/api/v1/signals/',
        send('POST', { name: `s${index}`, signal_type: 'score', connection: connection.id, status: index % 2 }, auth),
      );
      signals.push(((await response.json()) as { id: number }).id);
    }
    const audience = (
      (await (await api.request('/api/v1/audiences/', send('POST', { name: 'a', source_type: 'rules' }, auth))).json()) as { id: number }
    ).id;
    await expectCountersExact();

    await api.request(`/api/v1/signals/${signals[1]}/`, send('PATCH', { status: 2 }, auth));
    await api.request(`/api/v1/signals/${signals[2]}/`, send('PATCH', { status: 4 }, auth));
    await api.request(`/api/v1/signals/${signals[0]}/`, send('DELETE', undefined, auth));
    await api.request(`/api/v1/audiences/${audience}/`, send('PATCH', { status: 'active' }, auth));
    await expectCountersExact();

    // Deleting the connection pauses its active signals in one UPDATE.
    expect((await api.request(`/api/v1/connections/${connection.id}/`, send('DELETE', undefined, auth))).status).toBe(204);
    await expectCountersExact();

    await api.dataSource.query(
      `INSERT INTO signals (customer_id, name, signal_type, status) SELECT $1, 'bulk ' || n, 'value', n % 5 FROM generate_series(1, 500) AS n`,
      [workspace.customerId],
    );
    await api.dataSource.query(`UPDATE signals SET status = 4 WHERE customer_id = $1 AND name LIKE 'bulk 1%'`, [workspace.customerId]);
    await api.dataSource.query(`DELETE FROM signals WHERE customer_id = $1 AND name LIKE 'bulk 2%'`, [workspace.customerId]);
    await expectCountersExact();

    for (const query of ['', '?status=0', '?status=4', '?status=3']) {
      const list = (await (await api.request(`/api/v1/signals/${query}`, { headers: auth })).json()) as { count: number };
      const status = query ? Number(query.split('=')[1]) : undefined;
      const [{ count }] = await api.dataSource.query(
        `SELECT count(*)::int AS count FROM signals WHERE customer_id = $1${status === undefined ? '' : ' AND status = $2'}`,
        status === undefined ? [workspace.customerId] : [workspace.customerId, status],
      );
      expect(list.count).toBe(count);
    }
  });
});
