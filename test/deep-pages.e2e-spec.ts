import { bearer, createUser, createWorkspace, login, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** Deep pages take another SQL path (ids first, then rows); it must return what a plain OFFSET would. */
describe('deep pages', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
    await api.dataSource.query(
      `INSERT INTO signals (customer_id, name, signal_type, status) SELECT $1, 'signal ' || (n % 97), 'score', n % 3 FROM generate_series(1, 1500) AS n`,
      [workspace.customerId],
    );
  });
  afterAll(() => api.close());

  it.each([
    ['-id', 'id DESC'],
    ['name', 'name ASC, id ASC'],
    ['-updated_at', 'updated_at DESC, id DESC'],
  ])('returns the same rows as a plain OFFSET for ordering=%s, filtered and not', async (ordering, orderBy) => {
    for (const [filter, where] of [
      ['', ''],
      ['&status=1', ' AND status = 1'],
    ]) {
      const page = 60;
      const response = await api.request(`/api/v1/signals/?ordering=${ordering}&page=${page}&page_size=20${filter}`, { headers: auth });
      const body = (await response.json()) as { count: number; results: { id: number }[]; previous: string | null };
      const expected: { id: number }[] = await api.dataSource.query(
        `SELECT id FROM signals WHERE customer_id = $1${where} ORDER BY ${orderBy} LIMIT 20 OFFSET ${(page - 1) * 20}`,
        [workspace.customerId],
      );
      if (expected.length === 0) {
        expect(response.status).toBe(404);
        continue;
      }
      expect(response.status).toBe(200);
      expect(body.results.map((row) => row.id)).toEqual(expected.map((row) => row.id));
    }
  });
});
