import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  json,
  login,
  send,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { TenantContext } from '../src/common/tenancy/tenant-context.js';
import { Tenant } from '../src/common/tenancy/tenant.js';
import { ImportsService } from '../src/imports/imports.service.js';

/** Every tenant table, and how to read one workspace's rows of it in a stable order. */
const TENANT_TABLES = [
  'audiences',
  'audience_connections',
  'signals',
  'ai_model_instances',
  'connections',
  'api_keys',
  'mcp_tokens',
  'users',
  'auth_sessions',
  'idempotency_keys',
  'people',
  'imports',
  'import_rows',
  'audience_members',
  'model_scores',
  'sync_runs',
  'audience_destinations',
  'sync_sent_members',
  'signal_events',
  'signal_deliveries',
  'webhooks',
  'webhook_deliveries',
];

interface Seeded {
  workspace: Workspace;
  jwt: string;
  writeKey: string;
  mcpToken: string;
  mcpTokenId: number;
  connection: number;
  model: number;
  audience: number;
  signal: number;
  person: number;
  /** An external_id only this workspace has. */
  personExternalId: string;
  /** A queued import, its rows still staged (this app runs no workers). */
  importId: number;
  /** An upload audience with `person` as its member, active, with `connection` as its destination. */
  uploadAudience: number;
  /** A queued sync run of the upload audience (this app runs no workers). */
  syncRun: number;
  /** The row id of an event of `signal` (event_id `seed-event`, pending: this app runs no workers). */
  signalEvent: number;
  webhook: number;
  /** A test event to `webhook`, still pending (this app runs no workers). */
  delivery: number;
}

/**
 * SPEC section 1: another workspace's data is never returned, counted, modified or revealed.
 * Two workspaces get data of every kind; workspace A then calls every route with B's ids (paths,
 * bodies, filters) with each of its credentials; B's rows must be byte-for-byte unchanged.
 */
describe('tenant isolation', () => {
  let api: TestApp;
  let a: Seeded;
  let b: Seeded;

  async function seed(): Promise<Seeded> {
    const workspace = await createWorkspace(api);
    const jwt = (await login(api, await createUser(api, workspace, { role: 'admin' }))).access;
    const writeKey = (await createApiKey(api, workspace, { scope: 'write' })).key;
    const token = (await (await api.request('/api/v1/mcp-tokens/', json({ name: 'agent' }, bearer(jwt)))).json()) as {
      id: number;
      token: string;
    };
    const connection = (await createConnection(api, workspace)).id;
    const model = (await createModelInstance(api, workspace)).id;
    const audience = (
      (await (
        await api.request(
          '/api/v1/audiences/',
          json({ name: 'Seed audience', source_type: 'model', model_instance: model, connections: [connection] }, bearer(jwt)),
        )
      ).json()) as { id: number }
    ).id;
    const signal = (
      (await (
        await api.request(
          '/api/v1/signals/',
          json(
            {
              name: 'Seed signal',
              signal_type: 'score',
              model_instance: model,
              audience,
              connection,
              status: 1,
              config: { conversion_action_id: '424242' },
            },
            bearer(jwt),
          ),
        )
      ).json()) as { id: number }
    ).id;
    const personExternalId = `seed-person-${workspace.customerId}`;
    const people = [
      { external_id: 'seed-person', identifiers: { email: 'seed@example.com', phone: '+15551230000' }, traits: { seed: true } },
      { external_id: personExternalId, identifiers: { email: `seed-${workspace.customerId}@example.com` } },
    ];
    expect((await api.request('/api/v1/people/batch/', json({ people }, bearer(jwt)))).status).toBe(200);
    const listed = (await (await api.request(`/api/v1/people/?external_id=${personExternalId}`, { headers: bearer(jwt) })).json()) as {
      results: { id: number }[];
    };
    const person = listed.results[0]!.id;
    const imported = await api.request('/api/v1/imports/?target=people', {
      method: 'POST',
      headers: { ...bearer(jwt), 'content-type': 'text/csv' },
      body: `external_id,email,seed\n${personExternalId},import-${workspace.customerId}@example.com,imported\nseed-person,,imported\n`,
    });
    expect(imported.status).toBe(202);
    const importId = ((await imported.json()) as { id: number }).id;
    const uploadAudience = (
      (await (await api.request('/api/v1/audiences/', json({ name: 'Seed upload', source_type: 'upload' }, bearer(jwt)))).json()) as {
        id: number;
      }
    ).id;
    const members = await api.request(
      `/api/v1/audiences/${uploadAudience}/members/`,
      json({ action: 'add', people: [{ external_id: personExternalId }] }, bearer(jwt)),
    );
    expect(await members.json()).toEqual({ added: 1, removed: 0, rejected: [] });
    const scored = await api.request(
      `/api/v1/ai-model-instances/${model}/scores/`,
      json({ scores: [{ external_id: personExternalId, score: 0.9 }] }, bearer(jwt)),
    );
    expect(await scored.json()).toEqual({ written: 1, unknown_external_ids: [] });
    const activated = await api.request(
      `/api/v1/audiences/${uploadAudience}/`,
      send('PATCH', { status: 'active', connections: [connection] }, bearer(jwt)),
    );
    expect(activated.status).toBe(200);
    const synced = await api.request('/api/v1/syncs/', json({ audience: uploadAudience }, bearer(jwt)));
    expect(synced.status).toBe(201);
    const syncRun = ((await synced.json()) as { runs: { id: number }[] }).runs[0]!.id;
    const sent = await api.request(
      `/api/v1/signals/${signal}/events/`,
      json({ events: [{ event_id: 'seed-event', event_time: new Date().toISOString(), gclid: 'seed-gclid' }] }, bearer(jwt)),
    );
    expect(await sent.json()).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
    const events = (await (await api.request(`/api/v1/signals/${signal}/events/`, { headers: bearer(jwt) })).json()) as {
      results: { id: number }[];
    };
    const webhook = (
      (await (
        await api.request(
          '/api/v1/webhooks/',
          json({ url: 'http://127.0.0.1:9/seed', events: ['sync.failed'], description: 'Seed' }, bearer(jwt)),
        )
      ).json()) as { id: number }
    ).id;
    const delivery = (
      (await (await api.request(`/api/v1/webhooks/${webhook}/test/`, send('POST', undefined, bearer(jwt)))).json()) as { id: number }
    ).id;
    return {
      syncRun,
      signalEvent: events.results[0]!.id,
      webhook,
      delivery,
      uploadAudience,
      workspace,
      jwt,
      writeKey,
      mcpToken: token.token,
      mcpTokenId: token.id,
      connection,
      model,
      audience,
      signal,
      person,
      personExternalId,
      importId,
    };
  }

  async function snapshot(customerId: number): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const table of TENANT_TABLES) {
      const rows: { row: string }[] = await api.dataSource.query(
        `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE customer_id = $1 ORDER BY row_to_json(t)::text`,
        [customerId],
      );
      result[table] = rows.map((row) => row.row);
    }
    return result;
  }

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    a = await seed();
    b = await seed();
  });
  afterAll(() => api.close());

  /** Every route, with B's ids where a path or body names an object. Keys are "METHOD path-template". */
  function attacks(): Record<
    string,
    { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; body?: unknown; csv?: string; expect: number | 'empty' | 'own' }[]
  > {
    return {
      'GET /api/v1/audiences/': [
        { method: 'GET', path: `/api/v1/audiences/?customer=${b.workspace.customerId}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/audiences/', expect: 'own' },
      ],
      'POST /api/v1/audiences/': [
        { method: 'POST', path: '/api/v1/audiences/', body: { name: 'x1', source_type: 'model', model_instance: b.model }, expect: 400 },
        {
          method: 'POST',
          path: '/api/v1/audiences/',
          body: { name: 'x2', source_type: 'rules', connections: [b.connection] },
          expect: 400,
        },
      ],
      'GET /api/v1/audiences/{id}/': [{ method: 'GET', path: `/api/v1/audiences/${b.audience}/`, expect: 404 }],
      'PATCH /api/v1/audiences/{id}/': [
        { method: 'PATCH', path: `/api/v1/audiences/${b.audience}/`, body: { name: 'hijacked' }, expect: 404 },
        { method: 'PATCH', path: `/api/v1/audiences/${a.audience}/`, body: { model_instance: b.model }, expect: 400 },
        { method: 'PATCH', path: `/api/v1/audiences/${a.audience}/`, body: { connections: [b.connection] }, expect: 400 },
      ],
      'DELETE /api/v1/audiences/{id}/': [{ method: 'DELETE', path: `/api/v1/audiences/${b.audience}/`, expect: 404 }],
      'GET /api/v1/audiences/{id}/members/': [
        { method: 'GET', path: `/api/v1/audiences/${b.uploadAudience}/members/`, expect: 404 },
        { method: 'GET', path: `/api/v1/audiences/${a.uploadAudience}/members/`, expect: 'own' },
      ],
      // An external id both workspaces have names A's own person in A's upload; B's audience is not found.
      'POST /api/v1/audiences/{id}/members/': [
        {
          method: 'POST',
          path: `/api/v1/audiences/${b.uploadAudience}/members/`,
          body: { action: 'add', people: [{ external_id: 'x' }] },
          expect: 404,
        },
        {
          method: 'POST',
          path: `/api/v1/audiences/${b.uploadAudience}/members/`,
          body: { action: 'remove', people: [{ external_id: b.personExternalId }] },
          expect: 404,
        },
        {
          method: 'POST',
          path: `/api/v1/audiences/${a.uploadAudience}/members/`,
          body: { action: 'add', people: [{ external_id: 'seed-person', traits: { hijacked: true } }] },
          expect: 'own',
        },
        {
          method: 'POST',
          path: `/api/v1/audiences/${a.uploadAudience}/members/`,
          body: { action: 'remove', people: [{ external_id: b.personExternalId }] },
          expect: 'own',
        },
      ],

      'GET /api/v1/signals/': [
        { method: 'GET', path: `/api/v1/signals/?model_instance=${b.model}`, expect: 'empty' },
        { method: 'GET', path: `/api/v1/signals/?audience=${b.audience}`, expect: 'empty' },
        { method: 'GET', path: `/api/v1/signals/?connection=${b.connection}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/signals/?status=1', expect: 'own' },
      ],
      'POST /api/v1/signals/': [
        { method: 'POST', path: '/api/v1/signals/', body: { name: 'y1', signal_type: 'score', model_instance: b.model }, expect: 400 },
        { method: 'POST', path: '/api/v1/signals/', body: { name: 'y2', signal_type: 'score', audience: b.audience }, expect: 400 },
        {
          method: 'POST',
          path: '/api/v1/signals/',
          body: { name: 'y3', signal_type: 'score', connection: b.connection, status: 1 },
          expect: 400,
        },
      ],
      'GET /api/v1/signals/{id}/': [{ method: 'GET', path: `/api/v1/signals/${b.signal}/`, expect: 404 }],
      'GET /api/v1/signals/{id}/events/': [
        { method: 'GET', path: `/api/v1/signals/${b.signal}/events/`, expect: 404 },
        { method: 'GET', path: `/api/v1/signals/${b.signal}/events/?status=pending`, expect: 404 },
        { method: 'GET', path: `/api/v1/signals/${a.signal}/events/`, expect: 'own' },
      ],
      // The same event_id in A's own signal is A's event: B's stays as it was.
      'POST /api/v1/signals/{id}/events/': [
        {
          method: 'POST',
          path: `/api/v1/signals/${b.signal}/events/`,
          body: { events: [{ event_id: 'hijack', event_time: new Date().toISOString(), gclid: 'x' }] },
          expect: 404,
        },
        {
          method: 'POST',
          path: `/api/v1/signals/${a.signal}/events/`,
          body: { events: [{ event_id: 'seed-event', event_time: new Date().toISOString(), gclid: 'x' }] },
          expect: 'own',
        },
      ],
      'PATCH /api/v1/signals/{id}/': [
        { method: 'PATCH', path: `/api/v1/signals/${b.signal}/`, body: { status: 2 }, expect: 404 },
        { method: 'PATCH', path: `/api/v1/signals/${a.signal}/`, body: { connection: b.connection }, expect: 400 },
        { method: 'PATCH', path: `/api/v1/signals/${a.signal}/`, body: { audience: b.audience }, expect: 400 },
      ],
      'DELETE /api/v1/signals/{id}/': [{ method: 'DELETE', path: `/api/v1/signals/${b.signal}/`, expect: 404 }],

      'GET /api/v1/ai-model-instances/': [{ method: 'GET', path: '/api/v1/ai-model-instances/', expect: 'own' }],
      'POST /api/v1/ai-model-instances/': [
        {
          method: 'POST',
          path: '/api/v1/ai-model-instances/',
          body: { name: 'm', model_type: 'churn', base_model: 'gbm-v3', customer: b.workspace.customerId },
          expect: 'own',
        },
      ],
      'GET /api/v1/ai-model-instances/{id}/': [{ method: 'GET', path: `/api/v1/ai-model-instances/${b.model}/`, expect: 404 }],
      'PATCH /api/v1/ai-model-instances/{id}/': [
        { method: 'PATCH', path: `/api/v1/ai-model-instances/${b.model}/`, body: { status: 'archived' }, expect: 404 },
      ],
      'DELETE /api/v1/ai-model-instances/{id}/': [{ method: 'DELETE', path: `/api/v1/ai-model-instances/${b.model}/`, expect: 404 }],
      // Scores name people by external id: B's ids are unknown to A's model, and B's model is not found.
      'POST /api/v1/ai-model-instances/{id}/scores/': [
        {
          method: 'POST',
          path: `/api/v1/ai-model-instances/${b.model}/scores/`,
          body: { scores: [{ external_id: 'seed-person', score: 0.1 }] },
          expect: 404,
        },
        {
          method: 'POST',
          path: `/api/v1/ai-model-instances/${a.model}/scores/`,
          body: { scores: [{ external_id: `seed-person-${b.workspace.customerId}`, score: 0.1 }] },
          expect: 'own',
        },
      ],

      'GET /api/v1/connections/': [
        { method: 'GET', path: `/api/v1/connections/?customer=${b.workspace.customerId}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/connections/', expect: 'own' },
      ],
      'GET /api/v1/connections/{id}/': [{ method: 'GET', path: `/api/v1/connections/${b.connection}/`, expect: 404 }],
      'PATCH /api/v1/connections/{id}/': [
        { method: 'PATCH', path: `/api/v1/connections/${b.connection}/`, body: { account_name: 'hijacked' }, expect: 404 },
      ],
      'DELETE /api/v1/connections/{id}/': [{ method: 'DELETE', path: `/api/v1/connections/${b.connection}/`, expect: 404 }],

      'GET /api/v1/people/': [
        { method: 'GET', path: `/api/v1/people/?external_id=${b.personExternalId}`, expect: 'empty' },
        { method: 'GET', path: `/api/v1/people/?audience=${b.uploadAudience}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/people/?external_id=seed-person', expect: 'own' },
        { method: 'GET', path: '/api/v1/people/', expect: 'own' },
      ],
      // Upserts by external_id land in the caller's workspace: B's person with the same external_id is untouched.
      'POST /api/v1/people/batch/': [
        {
          method: 'POST',
          path: '/api/v1/people/batch/',
          body: { people: [{ external_id: 'seed-person', traits: { hijacked: true }, identifiers: { email: 'hijack@example.com' } }] },
          expect: 'own',
        },
        {
          method: 'POST',
          path: '/api/v1/people/batch/',
          body: { people: [{ external_id: b.personExternalId, traits: { hijacked: true }, customer: b.workspace.customerId }] },
          expect: 'own',
        },
      ],
      'GET /api/v1/people/{id}/': [{ method: 'GET', path: `/api/v1/people/${b.person}/`, expect: 404 }],
      'PATCH /api/v1/people/{id}/': [
        { method: 'PATCH', path: `/api/v1/people/${b.person}/`, body: { traits: { hijacked: true } }, expect: 404 },
        { method: 'PATCH', path: `/api/v1/people/${b.person}/`, body: { identifiers: { email: null } }, expect: 404 },
      ],
      'DELETE /api/v1/people/{id}/': [{ method: 'DELETE', path: `/api/v1/people/${b.person}/`, expect: 404 }],
      'GET /api/v1/imports/': [{ method: 'GET', path: '/api/v1/imports/', expect: 'own' }],
      // An import naming B's external ids creates or updates A's own people (merged below, as the job would).
      'POST /api/v1/imports/': [
        {
          method: 'POST',
          path: '/api/v1/imports/?target=people',
          csv: `external_id,email,hijacked:boolean\n${b.personExternalId},hijack@example.com,true\nseed-person,,true\n`,
          expect: 'own',
        },
        // B's upload audience reads like one that does not exist.
        {
          method: 'POST',
          path: `/api/v1/imports/?target=audience&audience=${b.uploadAudience}&mode=replace`,
          csv: 'external_id\nseed-person\n',
          expect: 400,
        },
      ],
      'GET /api/v1/imports/{id}/': [{ method: 'GET', path: `/api/v1/imports/${b.importId}/`, expect: 404 }],

      'GET /api/v1/syncs/': [
        { method: 'GET', path: `/api/v1/syncs/?audience=${b.uploadAudience}`, expect: 'empty' },
        { method: 'GET', path: `/api/v1/syncs/?connection=${b.connection}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/syncs/', expect: 'own' },
      ],
      // B's audience reads like one that does not exist; B's connection is no destination of A's audience.
      'POST /api/v1/syncs/': [
        { method: 'POST', path: '/api/v1/syncs/', body: { audience: b.uploadAudience }, expect: 400 },
        { method: 'POST', path: '/api/v1/syncs/', body: { audience: a.uploadAudience, connection: b.connection }, expect: 400 },
      ],
      'GET /api/v1/syncs/{id}/': [{ method: 'GET', path: `/api/v1/syncs/${b.syncRun}/`, expect: 404 }],
      'POST /api/v1/syncs/{id}/cancel/': [{ method: 'POST', path: `/api/v1/syncs/${b.syncRun}/cancel/`, expect: 404 }],
      'GET /api/v1/webhooks/': [{ method: 'GET', path: '/api/v1/webhooks/', expect: 'own' }],
      'POST /api/v1/webhooks/': [
        {
          method: 'POST',
          path: '/api/v1/webhooks/',
          body: { url: 'http://127.0.0.1:9/mine', events: ['sync.failed'], customer: b.workspace.customerId, id: b.webhook },
          expect: 'own',
        },
      ],
      'GET /api/v1/webhooks/{id}/': [{ method: 'GET', path: `/api/v1/webhooks/${b.webhook}/`, expect: 404 }],
      'PATCH /api/v1/webhooks/{id}/': [
        { method: 'PATCH', path: `/api/v1/webhooks/${b.webhook}/`, body: { url: 'http://127.0.0.1:9/hijacked' }, expect: 404 },
        { method: 'PATCH', path: `/api/v1/webhooks/${b.webhook}/`, body: { enabled: false }, expect: 404 },
      ],
      'DELETE /api/v1/webhooks/{id}/': [{ method: 'DELETE', path: `/api/v1/webhooks/${b.webhook}/`, expect: 404 }],
      'POST /api/v1/webhooks/{id}/rotate-secret/': [{ method: 'POST', path: `/api/v1/webhooks/${b.webhook}/rotate-secret/`, expect: 404 }],
      'POST /api/v1/webhooks/{id}/test/': [{ method: 'POST', path: `/api/v1/webhooks/${b.webhook}/test/`, expect: 404 }],
      'GET /api/v1/webhooks/{id}/deliveries/': [
        { method: 'GET', path: `/api/v1/webhooks/${b.webhook}/deliveries/`, expect: 404 },
        { method: 'GET', path: `/api/v1/webhooks/${a.webhook}/deliveries/`, expect: 'own' },
      ],

      'GET /api/v1/mcp-tokens/': [{ method: 'GET', path: '/api/v1/mcp-tokens/', expect: 'own' }],
      'POST /api/v1/mcp-tokens/': [{ method: 'POST', path: '/api/v1/mcp-tokens/', body: { name: 'mine' }, expect: 'own' }],
      'DELETE /api/v1/mcp-tokens/{id}/': [{ method: 'DELETE', path: `/api/v1/mcp-tokens/${b.mcpTokenId}/`, expect: 404 }],
      'GET /api/v1/users/me/': [{ method: 'GET', path: '/api/v1/users/me/', expect: 'own' }],
      // Token endpoints name no workspace object: they are covered by the auth suite.
      'POST /api/v1/jwt/create/': [],
      'POST /api/v1/jwt/refresh/': [],
      'POST /api/v1/jwt/verify/': [],
      'POST /api/v1/jwt/logout/': [],
      // Social login names no workspace object; test/social-login covers a user of another
      // workspace trying to link (409) and sign-in landing in the linked user's own workspace.
      // A connection flow names no object; its callback can only write to the workspace that
      // started it (test/connection-oauth checks the connections land there and nowhere else).
      'POST /oauth/connections/{id}/start': [],
      'GET /oauth/connections/{id}/callback': [],
      'GET /api/v1/auth/o/{id}/': [],
      'POST /api/v1/auth/o/{id}/': [],
      // The web interface's session endpoints name no workspace object: they sign in, renew and
      // end the caller's own session (test/web-session); what the page then reads goes through
      // the API routes above.
      'GET /app/session/config': [],
      'POST /app/session/login': [],
      'POST /app/session/refresh': [],
      'POST /app/session/logout': [],
      'POST /app/session/social/{id}': [],
    };
  }

  /** B's ids of the kind of object a path answers with (members are people). */
  function revealingIds(path: string): number[] {
    if (path.startsWith('/api/v1/people/') || path.includes('/members/')) return [b.person];
    if (path.includes('/events/')) return [b.signalEvent];
    if (path.startsWith('/api/v1/audiences/')) return [b.audience, b.uploadAudience];
    if (path.startsWith('/api/v1/signals/')) return [b.signal];
    if (path.startsWith('/api/v1/connections/')) return [b.connection];
    if (path.startsWith('/api/v1/ai-model-instances/')) return [b.model];
    if (path.startsWith('/api/v1/imports/')) return [b.importId];
    if (path.startsWith('/api/v1/syncs/')) return [b.syncRun];
    if (path.startsWith('/api/v1/mcp-tokens/')) return [b.mcpTokenId];
    if (path.includes('/deliveries/')) return [b.delivery];
    if (path.startsWith('/api/v1/webhooks/')) return [b.webhook];
    return [];
  }

  it('covers every route of the API document', () => {
    const document = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{id}')}`),
    );
    expect(Object.keys(attacks()).sort()).toEqual(documented.sort());
  });

  it("never returns, counts, changes or reveals workspace B's data to workspace A", async () => {
    const before = await snapshot(b.workspace.customerId);
    const personal = new Set([
      'GET /api/v1/mcp-tokens/',
      'POST /api/v1/mcp-tokens/',
      'DELETE /api/v1/mcp-tokens/{id}/',
      'GET /api/v1/users/me/',
    ]);
    for (const [route, cases] of Object.entries(attacks())) {
      const credentials = personal.has(route) ? [bearer(a.jwt)] : [bearer(a.jwt), apiKeyHeader(a.writeKey)];
      for (const headers of credentials) {
        for (const attack of cases) {
          const response = await api.request(
            attack.path,
            attack.csv !== undefined
              ? { method: attack.method, headers: { ...headers, 'content-type': 'text/csv' }, body: attack.csv }
              : send(attack.method, attack.method === 'GET' || attack.method === 'DELETE' ? undefined : attack.body, headers),
          );
          const text = await response.text();
          const label = `${attack.method} ${attack.path} ${JSON.stringify(attack.body ?? '')}`;
          if (attack.expect === 'empty') {
            expect({ label, status: response.status, count: (JSON.parse(text) as { count: number }).count }).toEqual({
              label,
              status: 200,
              count: 0,
            });
          } else if (attack.expect === 'own') {
            expect({ label, ok: response.status < 300 }).toEqual({ label, ok: true });
            const body = JSON.parse(text) as { customer?: number; results?: { customer?: number; id: number }[] };
            for (const item of body.results ?? [body]) if (item.customer !== undefined) expect(item.customer).toBe(a.workspace.customerId);
          } else {
            expect({ label, status: response.status }).toEqual({ label, status: attack.expect });
          }
          // A refusal must not tell B's objects apart from ids that do not exist.
          if (attack.expect === 400) {
            const messages = Object.values((JSON.parse(text) as { errors: Record<string, string[]> }).errors).flat();
            expect(messages.some((message) => /^Invalid pk "\d+" - object does not exist\.$/.test(message))).toBe(true);
            expect(text).not.toContain('Seed');
          }
          // Each resource's ids come from its own sequence and may equal another's: an answer is checked for B's ids of its own kind.
          const revealing = revealingIds(attack.path);
          for (const id of revealing) {
            if (attack.expect !== 400 && attack.expect !== 404) expect(text).not.toMatch(new RegExp(`"id":${id}[,}]`));
          }
        }
      }
    }

    const client = new Client({ name: 'isolation', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), { requestInit: { headers: bearer(a.mcpToken) } }),
    );
    const calls: [string, Record<string, unknown>][] = [
      ['get_audience', { id: b.audience }],
      ['update_audience', { id: b.audience, name: 'hijacked' }],
      ['get_signal', { id: b.signal }],
      ['update_signal', { id: b.signal, status: 2 }],
      ['get_ai_model_instance', { id: b.model }],
      ['get_connection', { id: b.connection }],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
      expect({ name, isError: result.isError, code: (JSON.parse(result.content[0]!.text) as { code: string }).code }).toEqual({
        name,
        isError: true,
        code: 'not_found',
      });
    }
    const refused = (await client.callTool({
      name: 'create_signal',
      arguments: { name: 'z', signal_type: 'score', connection: b.connection },
    })) as { isError?: boolean; content: { text: string }[] };
    expect(JSON.parse(refused.content[0]!.text)).toMatchObject({
      code: 'validation_error',
      errors: { connection: [`Invalid pk "${b.connection}" - object does not exist.`] },
    });
    for (const [name, args] of [
      ['list_signals', { connection: b.connection }],
      ['list_audiences', { search: 'Seed' }],
      ['list_connections', {}],
      ['list_ai_model_instances', {}],
    ] as [string, Record<string, unknown>][]) {
      const result = (await client.callTool({ name, arguments: args })) as unknown as {
        structuredContent: { results: { customer: number }[] };
      };
      for (const item of result.structuredContent.results) expect(item.customer).toBe(a.workspace.customerId);
    }
    await client.close();

    // A's imports merged as the job would (this app runs no workers): B's people, hashes, imports and staged rows stay as they were.
    const queued: { id: string }[] = await api.dataSource.query(`SELECT id FROM imports WHERE customer_id = $1 AND status = 'queued'`, [
      a.workspace.customerId,
    ]);
    expect(queued.length).toBeGreaterThan(1);
    const imports = api.app.get(ImportsService);
    for (const { id } of queued)
      await api.app.get(TenantContext).run(Tenant.forOperator(a.workspace.customerId), () => imports.merge(Number(id)));
    const merged: { status: string }[] = await api.dataSource.query(`SELECT status FROM imports WHERE customer_id = $1 AND id = ANY($2)`, [
      a.workspace.customerId,
      queued.map((row) => row.id),
    ]);
    expect(merged.map((row) => row.status)).toEqual(queued.map(() => 'succeeded'));

    expect(await snapshot(b.workspace.customerId)).toEqual(before);
  });
});
