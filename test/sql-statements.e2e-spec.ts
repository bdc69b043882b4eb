import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_DISTRIBUTION } from '../src/database/distribution.js';
import { apiKeyHeader, createApiKey, createWorkspace, send } from './support/factories.js';
import { StatementRecorder } from './support/statement-recorder.js';
import { TenantContext } from '../src/common/tenancy/tenant-context.js';
import { Tenant } from '../src/common/tenancy/tenant.js';
import { ImportsService } from '../src/imports/imports.service.js';
import { MembershipsService } from '../src/memberships/memberships.service.js';
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
      '/api/v1/audiences/?model_instance={model}',
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
      '/api/v1/connections/?search=seg',
      '/api/v1/connections/?ordering=name',
      '/api/v1/connections/?page=60',
      '/api/v1/connections/{id}/',
    ],
  },
  people: {
    table: 'people',
    requests: [
      '/api/v1/people/',
      '/api/v1/people/?external_id=seg-person-7',
      '/api/v1/people/?ordering=external_id',
      '/api/v1/people/?ordering=-updated_at',
      '/api/v1/people/?page=60',
      '/api/v1/people/{id}/',
    ],
  },
  imports: {
    table: 'imports',
    requests: ['/api/v1/imports/', '/api/v1/imports/?ordering=created_at', '/api/v1/imports/?page=60', '/api/v1/imports/{id}/'],
  },
  webhooks: {
    table: 'webhooks',
    requests: [
      '/api/v1/webhooks/',
      '/api/v1/webhooks/?ordering=created_at',
      '/api/v1/webhooks/{id}/',
      '/api/v1/webhooks/{id}/deliveries/',
      '/api/v1/webhooks/{id}/deliveries/?status=failed',
      '/api/v1/webhooks/{id}/deliveries/?page=60',
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
    const [person] = await api.dataSource.query(
      `INSERT INTO people (customer_id, external_id, traits) SELECT $1, 'seg-person-' || n, '{}' FROM generate_series(1, 1200) n RETURNING id`,
      [customer],
    );
    const [imported] = await api.dataSource.query(
      `INSERT INTO imports (customer_id, target, status) SELECT $1, 'people', 'succeeded' FROM generate_series(1, 1200) n RETURNING id`,
      [customer],
    );
    // One endpoint with 1,200 deliveries (the secret is never read on these paths).
    const [webhook] = await api.dataSource.query(
      `INSERT INTO webhooks (customer_id, url, events, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '{sync.failed}', '\\x00') RETURNING id`,
      [customer],
    );
    await api.dataSource.query(
      `INSERT INTO webhook_deliveries (customer_id, webhook_id, event_id, event_type, body, status)
       SELECT $1, $2, 'msg_' || n, 'sync.failed', '{}', 'failed' FROM generate_series(1, 1200) n`,
      [customer, webhook.id],
    );
    Object.assign(ids, {
      model: model.id,
      connection: connection.id,
      audience: audience.id,
      signal: signal.id,
      person: person.id,
      import: imported.id,
      webhook: webhook.id,
    });
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
      people: ids.person!,
      imports: ids.import!,
      webhooks: ids.webhook!,
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

/** The write requests of each resource, in order; `{x}` is an id the test created before. */
const WRITES: Record<string, { method: 'POST' | 'PATCH' | 'DELETE'; path: string; body?: Record<string, unknown>; status: number }[]> = {
  audiences: [
    {
      method: 'POST',
      path: '/api/v1/audiences/',
      body: { name: 'Written', source_type: 'rules', connections: ['{connection}'] },
      status: 201,
    },
    { method: 'PATCH', path: '/api/v1/audiences/{created}/', body: { description: 'Changed', connections: [] }, status: 200 },
    { method: 'DELETE', path: '/api/v1/audiences/{created}/', status: 204 },
  ],
  signals: [
    {
      method: 'POST',
      path: '/api/v1/signals/',
      body: {
        name: 'Written',
        signal_type: 'score',
        model_instance: '{model}',
        audience: '{audience}',
        connection: '{connection}',
        config: { conversion_action_id: '123456789' },
      },
      status: 201,
    },
    { method: 'PATCH', path: '/api/v1/signals/{created}/', body: { description: 'Changed', status: 1 }, status: 200 },
    { method: 'DELETE', path: '/api/v1/signals/{created}/', status: 204 },
  ],
  'ai-model-instances': [
    {
      method: 'POST',
      path: '/api/v1/ai-model-instances/',
      body: { name: 'Written', model_type: 'propensity', base_model: 'gbm' },
      status: 201,
    },
    { method: 'PATCH', path: '/api/v1/ai-model-instances/{created}/', body: { name: 'Renamed' }, status: 200 },
    { method: 'DELETE', path: '/api/v1/ai-model-instances/{created}/', status: 204 },
  ],
  // Events are one INSERT of every new event (unnest) and the delivery job's enqueue, in one transaction (SPEC 10.4).
  'signal-events': [
    {
      method: 'POST',
      path: '/api/v1/signals/',
      body: {
        name: 'Sends events',
        signal_type: 'conversion',
        connection: '{connection}',
        config: { conversion_action_id: '123456789' },
        status: 1,
      },
      status: 201,
    },
    {
      method: 'POST',
      path: '/api/v1/signals/{created}/events/',
      body: {
        events: [
          {
            event_id: 'order-1',
            event_time: new Date().toISOString(),
            value: 10,
            currency: 'EUR',
            identifiers: { email: 'ada@example.com' },
          },
          { event_id: 'order-2', event_time: new Date().toISOString(), gclid: 'gclid-2' },
          { event_id: 'order-1', event_time: new Date().toISOString(), gclid: 'repeated' },
        ],
      },
      status: 202,
    },
  ],
  // A connection's delete detaches the signals that use it (SPEC section 3), in the same transaction.
  connections: [
    { method: 'PATCH', path: '/api/v1/connections/{connection}/', body: { account_name: 'Renamed' }, status: 200 },
    { method: 'DELETE', path: '/api/v1/connections/{connection}/', status: 204 },
  ],
  // A batch is four statements whatever its size (SPEC 10.1): the named people locked, one upsert,
  // one delete of the identifier kinds named, one insert of the hashes.
  people: [
    {
      method: 'POST',
      path: '/api/v1/people/batch/',
      body: {
        people: [
          { external_id: 'written', identifiers: { email: 'new@example.com', phone: '+15551230001' }, traits: { plan: 'pro' } },
          { external_id: 'seeded', identifiers: { email: 'seeded@example.com' }, consent: { ad_user_data: 'granted' } },
          { external_id: 'rejected', identifiers: { email: 'not-an-email' } },
        ],
      },
      status: 200,
    },
    {
      method: 'PATCH',
      path: '/api/v1/people/{person}/',
      body: { traits: { plan: null }, identifiers: { phone: '+15551230002' } },
      status: 200,
    },
    { method: 'DELETE', path: '/api/v1/people/{person}/', status: 204 },
  ],
  // A test event is one delivery row and its job, in one transaction (SPEC 10.5).
  webhooks: [
    { method: 'POST', path: '/api/v1/webhooks/', body: { url: 'http://127.0.0.1:9/written', events: ['sync.failed'] }, status: 201 },
    {
      method: 'PATCH',
      path: '/api/v1/webhooks/{created}/',
      body: { events: ['sync.failed', 'import.finished'], enabled: false },
      status: 200,
    },
    { method: 'POST', path: '/api/v1/webhooks/{created}/rotate-secret/', status: 200 },
    { method: 'DELETE', path: '/api/v1/webhooks/{created}/', status: 204 },
    { method: 'POST', path: '/api/v1/webhooks/{webhook}/test/', status: 202 },
  ],
};

/** A table name as a statement names it: bare or quoted, as a whole word. */
function tablesIn(sql: string, tables: readonly string[]): string[] {
  return tables.filter((table) => new RegExp(`(^|[^\\w])"?${table}"?([^\\w]|$)`).test(sql));
}

/**
 * The SQL of every write, rendered to test/sql/<resource>-writes.sql like the reads, and the rule
 * that makes tenancy structural: every statement that touches a table distributed by customer_id
 * names customer_id and binds the workspace's id.
 */
describe('SQL statements of the write paths', () => {
  let api: TestApp;
  const recorder = new StatementRecorder();
  let headers: Record<string, string>;
  let customerId: number;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { dataSourceOverrides: { logging: ['query'], logger: recorder } });
    const workspace = await createWorkspace(api);
    customerId = workspace.customerId;
    headers = apiKeyHeader((await createApiKey(api, workspace, { scope: 'write' })).key);
    const [[model], [connection], [audience]] = await Promise.all([
      api.dataSource.query(
        `INSERT INTO ai_model_instances (customer_id, name, model_type, base_model, status) VALUES ($1, 'model', 'propensity', 'gbm', 'ready') RETURNING id`,
        [customerId],
      ),
      api.dataSource.query(
        `INSERT INTO connections (customer_id, platform, external_account_id, account_name, status) VALUES ($1, 'google_ads', 'acct', 'Account', 'active') RETURNING id`,
        [customerId],
      ),
      api.dataSource.query(
        `INSERT INTO audiences (customer_id, name, source_type, status) VALUES ($1, 'audience', 'rules', 'active') RETURNING id`,
        [customerId],
      ),
    ]);
    const [person] = await api.dataSource.query(`INSERT INTO people (customer_id, external_id) VALUES ($1, 'seeded') RETURNING id`, [
      customerId,
    ]);
    const [webhook] = await api.dataSource.query(
      `INSERT INTO webhooks (customer_id, url, events, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '{sync.failed}', '\\x00') RETURNING id`,
      [customerId],
    );
    Object.assign(ids, { model: model.id, connection: connection.id, audience: audience.id, person: person.id, webhook: webhook.id });
    expect((await api.request('/api/v1/audiences/?page_size=1', { headers })).status).toBe(200);
  });
  afterAll(() => api.close());

  it.each(Object.entries(WRITES))(
    'renders the writes of %s to test/sql and binds the workspace in every statement',
    async (resource, writes) => {
      const sections: string[] = [];
      const fill = (text: string) => text.replace(/\{(\w+)\}/g, (_match, name: string) => String(ids[name]));
      for (const write of writes) {
        recorder.statements = [];
        recorder.parameters = [];
        // A placeholder alone is the id as a number; inside a string (a path), its digits.
        const placeholders = (text: string) => text.replace(/"\{(\w+)\}"/g, (_match, name: string) => String(ids[name]));
        const body = write.body && (JSON.parse(fill(placeholders(JSON.stringify(write.body)))) as Record<string, unknown>);
        const response = await api.request(fill(write.path), send(write.method, body, headers));
        expect(response.status).toBe(write.status);
        // A batch answers counts, not an object: its PATCH and DELETE use the seeded person.
        if (write.method === 'POST') ids.created = ((await response.json()) as { id?: number }).id ?? ids.created!;
        else await response.arrayBuffer();
        const recorded = recorder.statements
          .map((sql, index) => ({ sql, parameters: recorder.parameters[index]! }))
          .filter(({ sql }) => !sql.includes('api_keys'));
        for (const { sql, parameters } of recorded) {
          if (tablesIn(sql, TABLE_DISTRIBUTION.distributed).length === 0) continue;
          expect({
            sql,
            namesCustomerId: sql.includes('customer_id'),
            bindsWorkspace: parameters.some((value) => Number(value) === customerId),
          }).toEqual({
            sql,
            namesCustomerId: true,
            bindsWorkspace: true,
          });
        }
        sections.push(`-- ${write.method} ${write.path}\n${recorded.map(({ sql }) => `${readable(sql)};`).join('\n')}`);
      }
      const rendered = `-- Generated by test/sql-statements.e2e-spec.ts: the statements each write runs, in order.\n\n${sections.join('\n\n')}\n`;
      const file = join(import.meta.dirname, 'sql', `${resource}-writes.sql`);
      if (process.env.UPDATE_SQL) writeFileSync(file, rendered);
      expect(rendered).toBe(readFileSync(file, 'utf8'));
    },
  );

  // An import's upload (its COPY goes through the driver, not TypeORM, so it is not recorded here:
  // ImportsRepository.stage writes customer_id from the tenant context) and its merge job, which is
  // a fixed number of statements whatever the file's size.
  it('renders the upload and the merge of an import to test/sql and binds the workspace in every statement', async () => {
    const sections: string[] = [];
    const record = async (title: string, work: () => Promise<void>) => {
      recorder.statements = [];
      recorder.parameters = [];
      await work();
      const recorded = recorder.statements
        .map((sql, index) => ({ sql, parameters: recorder.parameters[index]! }))
        .filter(({ sql }) => !sql.includes('api_keys'));
      for (const { sql, parameters } of recorded) {
        if (tablesIn(sql, TABLE_DISTRIBUTION.distributed).length === 0) continue;
        expect({ sql, bindsWorkspace: parameters.some((value) => Number(value) === customerId) }).toEqual({ sql, bindsWorkspace: true });
      }
      sections.push(`-- ${title}\n${recorded.map(({ sql }) => `${readable(sql)};`).join('\n')}`);
    };
    let importId = 0;
    await record('POST /api/v1/imports/?target=people', async () => {
      const response = await api.request('/api/v1/imports/?target=people', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'text/csv' },
        body: 'external_id,email,plan\nseeded,seeded@example.com,pro\nnew,new@example.com,\nnew,again@example.com,\n',
      });
      expect(response.status).toBe(202);
      importId = ((await response.json()) as { id: number }).id;
    });
    await record('job imports.merge', async () => {
      const imports = api.app.get(ImportsService);
      await api.app.get(TenantContext).run(Tenant.forOperator(customerId), () => imports.merge(importId));
    });
    const [row] = await api.dataSource.query('SELECT status FROM imports WHERE id = $1', [importId]);
    expect(row.status).toBe('succeeded');
    const rendered = `-- Generated by test/sql-statements.e2e-spec.ts: the statements each write runs, in order.\n\n${sections.join('\n\n')}\n`;
    const file = join(import.meta.dirname, 'sql', 'imports-writes.sql');
    if (process.env.UPDATE_SQL) writeFileSync(file, rendered);
    expect(rendered).toBe(readFileSync(file, 'utf8'));
  });

  // The membership recompute (SPEC 10.2) of representative audiences: a rules tree with every
  // kind of condition, a model audience, an upload audience. One statement does the set work.
  it('renders the recompute of rules, model and upload audiences to test/sql and binds the workspace in every statement', async () => {
    const model = await api.request(
      '/api/v1/ai-model-instances/',
      send('POST', { name: 'Recompute model', model_type: 'churn', base_model: 'gbm-v3' }, headers),
    );
    const modelId = ((await model.json()) as { id: number }).id;
    await api.dataSource.query(`UPDATE ai_model_instances SET status = 'ready' WHERE id = $1`, [modelId]);
    const audiences: [string, Record<string, unknown>][] = [
      [
        'rules: every kind of condition',
        {
          source_type: 'rules',
          rules: {
            all: [
              { trait: 'plan', op: 'eq', value: 'pro' },
              { trait: 'ltv', op: 'gte', value: 100 },
              {
                any: [
                  { trait: 'country', op: 'in', value: ['DE', 'FR'] },
                  { trait: 'city', op: 'contains', value: 'berg' },
                ],
              },
              { not: { trait: 'churned', op: 'exists' } },
              { trait: 'tier', op: 'not_in', value: [1, 2] },
              { trait: 'vip', op: 'neq', value: false },
              { consent: 'ad_personalization', op: 'eq', value: 'granted' },
            ],
          },
        },
      ],
      ['rules: {} selects nobody', { source_type: 'rules', rules: {} }],
      ['model, min_score 0.8', { source_type: 'model', model_instance: modelId, min_score: 0.8 }],
      ['upload', { source_type: 'upload' }],
    ];
    const sections: string[] = [];
    for (const [title, body] of audiences) {
      const created = await api.request('/api/v1/audiences/', send('POST', { name: `Recompute ${title}`, ...body }, headers));
      expect(created.status).toBe(201);
      const audienceId = ((await created.json()) as { id: number }).id;
      recorder.statements = [];
      recorder.parameters = [];
      const memberships = api.app.get(MembershipsService);
      await api.app.get(TenantContext).run(Tenant.forOperator(customerId), () => memberships.recompute(audienceId));
      const recorded = recorder.statements.map((sql, index) => ({ sql, parameters: recorder.parameters[index]! }));
      for (const { sql, parameters } of recorded) {
        if (tablesIn(sql, TABLE_DISTRIBUTION.distributed).length === 0) continue;
        expect({ sql, bindsWorkspace: parameters.some((value) => Number(value) === customerId) }).toEqual({ sql, bindsWorkspace: true });
      }
      sections.push(`-- job memberships.recompute, ${title}\n${recorded.map(({ sql }) => `${readable(sql)};`).join('\n')}`);
    }
    const rendered = `-- Generated by test/sql-statements.e2e-spec.ts: the statements each recompute runs, in order.\n\n${sections.join('\n\n')}\n`;
    const file = join(import.meta.dirname, 'sql', 'memberships-recompute.sql');
    if (process.env.UPDATE_SQL) writeFileSync(file, rendered);
    expect(rendered).toBe(readFileSync(file, 'utf8'));
  });
});
