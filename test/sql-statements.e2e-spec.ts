import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKeyHeader, createApiKey, createWorkspace } from './support/factories.js';
import { StatementRecorder } from './support/statement-recorder.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** Per resource: its table and the requests whose statements are recorded. Deep pages start at offset 1,000. */
const SHAPES: Record<string, { table: string; requests: string[] }> = {
  audiences: {
    table: 'audiences',
    requests: [
      '/api/v1/audiences/',
      '/api/v1/audiences/?status=active',
      '/api/v1/audiences/?source_type=rules',
      '/api/v1/audiences/?search=seg',
      '/api/v1/audiences/?status=active&source_type=rules&search=seg',
      '/api/v1/audiences/?ordering=name',
      '/api/v1/audiences/?ordering=-updated_at',
      '/api/v1/audiences/?page=60',
      '/api/v1/audiences/{id}/',
    ],
  },
  signals: {
    table: 'signals',
    requests: [
      '/api/v1/signals/',
      '/api/v1/signals/?status=1',
      '/api/v1/signals/?signal_type=score',
      '/api/v1/signals/?model_instance={model}',
      '/api/v1/signals/?audience={audience}',
      '/api/v1/signals/?connection={connection}',
      '/api/v1/signals/?search=seg',
      '/api/v1/signals/?status=1&signal_type=score&model_instance={model}&audience={audience}&connection={connection}&search=seg',
      '/api/v1/signals/?ordering=status',
      '/api/v1/signals/?page=60',
      '/api/v1/signals/{id}/',
    ],
  },
  'ai-model-instances': {
    table: 'ai_model_instances',
    requests: [
      '/api/v1/ai-model-instances/',
      '/api/v1/ai-model-instances/?status=ready',
      '/api/v1/ai-model-instances/?model_type=propensity',
      '/api/v1/ai-model-instances/?search=seg',
      '/api/v1/ai-model-instances/?status=ready&model_type=propensity&search=seg',
      '/api/v1/ai-model-instances/?ordering=created_at',
      '/api/v1/ai-model-instances/?page=60',
      '/api/v1/ai-model-instances/{id}/',
    ],
  },
  connections: {
    table: 'connections',
    requests: [
      '/api/v1/connections/',
      '/api/v1/connections/?status=active',
      '/api/v1/connections/?platform=google_ads',
      '/api/v1/connections/?platform=google_ads&status=active',
      '/api/v1/connections/?ordering=name',
      '/api/v1/connections/?page=60',
      '/api/v1/connections/{id}/',
    ],
  },
};

/** One clause a line, so a diff points at the clause that changed. */
function readable(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .replace(/ (FROM|WHERE|ORDER BY|LIMIT|JOIN|AND) /g, '\n  $1 ')
    .trim();
}

/**
 * The SQL of every list shape and of each detail read, as the service sends it, rendered to
 * test/sql/<resource>.sql and compared with the committed files (after Immich's @GenerateSql):
 * a change to a statement shows up in review. `UPDATE_SQL=1 npm test -- test/sql-statements`
 * rewrites them.
 */
describe('SQL statements of the list and detail paths', () => {
  let api: TestApp;
  const recorder = new StatementRecorder();
  let headers: Record<string, string>;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { dataSourceOverrides: { logging: ['query'], logger: recorder } });
    const workspace = await createWorkspace(api);
    headers = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
    const customer = workspace.customerId;
    // 1,200 rows of each resource, so page 60 (offset 1,180) takes the deferred-join path.
    const [model] = await api.dataSource.query(
      `INSERT INTO ai_model_instances (customer_id, name, model_type, base_model, status)
       SELECT $1, 'seg model ' || n, 'propensity', 'gbm', 'ready' FROM generate_series(1, 1200) n RETURNING id`,
      [customer],
    );
    const [connection] = await api.dataSource.query(
      `INSERT INTO connections (customer_id, platform, external_account_id, account_name, status)
       SELECT $1, 'google_ads', 'acct-' || n, 'Account ' || n, 'active' FROM generate_series(1, 1200) n RETURNING id`,
      [customer],
    );
    const [audience] = await api.dataSource.query(
      `INSERT INTO audiences (customer_id, name, source_type, status)
       SELECT $1, 'seg audience ' || n, 'rules', 'active' FROM generate_series(1, 1200) n RETURNING id`,
      [customer],
    );
    // Active, with every reference set, so each filtered list has rows and runs its page query.
    const [signal] = await api.dataSource.query(
      `INSERT INTO signals (customer_id, name, signal_type, status, model_instance_id, audience_id, connection_id)
       SELECT $1, 'seg signal ' || n, 'score', 1, $2, $3, $4 FROM generate_series(1, 1200) n RETURNING id`,
      [customer, model.id, audience.id, connection.id],
    );
    Object.assign(ids, { model: model.id, connection: connection.id, audience: audience.id, signal: signal.id });
    // The key's first use loads it into the credential cache; record only what requests run after that.
    expect((await api.request('/api/v1/audiences/?page_size=1', { headers })).status).toBe(200);
  });
  afterAll(() => api.close());

  it.each(Object.entries(SHAPES))('renders %s to test/sql and matches the committed file', async (resource, { table, requests }) => {
    const detailId: Record<string, number> = {
      audiences: ids.audience!,
      signals: ids.signal!,
      'ai-model-instances': ids.model!,
      connections: ids.connection!,
    };
    const sections: string[] = [];
    for (const template of requests) {
      const path = template
        .replace('{id}', String(detailId[resource]))
        .replace(/\{(model|audience|connection)\}/g, (_match, name: string) => String(ids[name]));
      recorder.statements = [];
      const response = await api.request(path, { headers });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      // The API key's own bookkeeping (its last_used_at, written at most once a minute) is not the request's SQL.
      const statements = recorder.statements.filter((sql) => !sql.includes('api_keys'));
      expect(statements.some((sql) => sql.includes(`"${table}"`))).toBe(true);
      sections.push(`-- GET ${template}\n${statements.map((sql) => `${readable(sql)};`).join('\n')}`);
    }
    const rendered = `-- Generated by test/sql-statements.e2e-spec.ts: the statements each request runs, in order.\n\n${sections.join('\n\n')}\n`;
    const file = join(import.meta.dirname, 'sql', `${resource}.sql`);
    if (process.env.UPDATE_SQL) writeFileSync(file, rendered);
    expect(rendered).toBe(readFileSync(file, 'utf8'));
  });
});
