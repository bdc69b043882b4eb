import pg from 'pg';
import { apiKeyHeader, createApiKey, createWorkspace, json, send } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const AUDIENCES = '/api/v1/audiences/';

/**
 * Issue 25, item 2: one workspace must not hold the whole database pool. Workspace A's writes are
 * made to wait in PostgreSQL (a row lock the test holds), each holding its pool connection, while
 * A keeps sending more; workspace B must still be answered at once. Pool of 4, share of 2.
 */
describe('a workspace flooding the API, on a pool of 4 with WORKSPACE_POOL_SHARE=2', () => {
  let api: TestApp;
  let flooding: Record<string, string>;
  let other: Record<string, string>;
  let target: number;
  let locker: pg.Client;

  beforeAll(async () => {
    api = await startTestApp({ DATABASE_POOL_SIZE: '4', WORKSPACE_POOL_SHARE: '2', WORKSPACE_POOL_WAIT_MS: '1500' });
    flooding = apiKeyHeader((await createApiKey(api, await createWorkspace(api))).key);
    other = apiKeyHeader((await createApiKey(api, await createWorkspace(api))).key);
    const created = await api.request(AUDIENCES, json({ name: 'Held', source_type: 'rules' }, flooding));
    target = ((await created.json()) as { id: number }).id;
    // Both keys checked once, so later requests find them in the credential cache.
    for (const headers of [flooding, other]) expect((await api.request(AUDIENCES, { headers })).status).toBe(200);
    locker = new pg.Client({ connectionString: api.databaseUrl });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await api.close();
  });

  async function waitingOnTheLock(): Promise<number> {
    const { rows } = await locker.query<{ waiting: number }>(
      "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    return rows[0]!.waiting;
  }

  it('answers another workspace at once while one holds its share, and refuses the flood past it with 429 and Retry-After', async () => {
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM audiences WHERE id = $1 FOR UPDATE', [target]);
    let floods: Promise<Response>[] = [];
    try {
      // Six writes to the held row: two hold A's share of connections, waiting on the lock; the rest wait for A's own.
      floods = Array.from({ length: 6 }, (_, index) =>
        api.request(`${AUDIENCES}${target}/`, send('PATCH', { description: `flood ${index}` }, flooding)),
      );
      const deadline = Date.now() + 5000;
      while ((await waitingOnTheLock()) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await waitingOnTheLock()).toBe(2);

      // The other workspace reads and writes, on the connections A cannot take.
      const started = performance.now();
      const [list, create] = await Promise.all([
        api.request(AUDIENCES, { headers: other }),
        api.request(AUDIENCES, json({ name: 'Not waiting', source_type: 'rules' }, other)),
      ]);
      const elapsed = performance.now() - started;
      expect({ list: list.status, create: create.status }).toEqual({ list: 200, create: 201 });
      expect(elapsed).toBeLessThan(1000);
      // Still no more than A's share in PostgreSQL.
      expect(await waitingOnTheLock()).toBe(2);

      // A's writes past its share: refused once they have waited WORKSPACE_POOL_WAIT_MS.
      const refused = await Promise.race(floods);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ status: 429, code: 'throttled' });
      // The other three waited as long, give or take the milliseconds between their arrivals.
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await locker.query('ROLLBACK');
    }
    const statuses = (await Promise.all(floods)).map((response) => response.status).sort();
    // The two that held the share go through once the row is free; the four that waited for them were refused.
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    expect((await api.request(`${AUDIENCES}${target}/`, { headers: flooding })).status).toBe(200);
  });
});
