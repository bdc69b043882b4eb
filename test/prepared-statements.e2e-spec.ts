import { createApiKey, createWorkspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Lists and reads by id reach PostgreSQL as named prepared statements (src/database/prepared-statements.ts),
 * and DATABASE_PREPARED_STATEMENTS=false sends them unnamed. With a pool of one connection, the
 * app's own statements and pg_prepared_statements share the session, so the view shows what the
 * requests prepared.
 */
describe('prepared statements', () => {
  async function preparedAfterRequests(api: TestApp): Promise<string[]> {
    const workspace = await createWorkspace(api);
    const { key } = await createApiKey(api, workspace);
    const headers = { authorization: `Api-Key ${key}` };
    const created = await api.request('/api/v1/audiences/', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Buyers', source_type: 'rules', rules: {} }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    for (let round = 0; round < 2; round++) {
      expect((await api.request('/api/v1/audiences/', { headers })).status).toBe(200);
      expect((await api.request('/api/v1/signals/?status=1', { headers })).status).toBe(200);
      expect((await api.request(`/api/v1/audiences/${id}/`, { headers })).status).toBe(200);
    }
    const rows: { statement: string }[] = await api.dataSource.query('SELECT statement FROM pg_prepared_statements WHERE from_sql = false');
    return rows.map((row) => row.statement);
  }

  it('names the list and by-id statements, once each per connection', async () => {
    const api = await startTestApp({ DATABASE_POOL_SIZE: '1' });
    try {
      const statements = await preparedAfterRequests(api);
      expect(statements.filter((sql) => sql.includes('FROM "audiences" t') && sql.includes('__total'))).toHaveLength(1);
      expect(statements.filter((sql) => sql.includes('FROM "signals" t') && sql.includes('AND status = $'))).toHaveLength(1);
      expect(statements.filter((sql) => sql.includes('FROM "audiences" t WHERE t.customer_id = $1 AND t."id" = $2'))).toHaveLength(1);
      // Statements built per request (here: the INSERT) stay unnamed.
      expect(statements.some((sql) => sql.startsWith('INSERT'))).toBe(false);
    } finally {
      await api.close();
    }
  });

  it('sends every statement unnamed with DATABASE_PREPARED_STATEMENTS=false', async () => {
    const api = await startTestApp({ DATABASE_POOL_SIZE: '1', DATABASE_PREPARED_STATEMENTS: 'false' });
    try {
      expect(await preparedAfterRequests(api)).toEqual([]);
    } finally {
      await api.close();
    }
  });
});
