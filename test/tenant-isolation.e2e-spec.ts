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
          json({ name: 'Seed signal', signal_type: 'score', model_instance: model, audience, connection, status: 1 }, bearer(jwt)),
        )
      ).json()) as { id: number }
    ).id;
    return { workspace, jwt, writeKey, mcpToken: token.token, mcpTokenId: token.id, connection, model, audience, signal };
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
    { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; body?: unknown; expect: number | 'empty' | 'own' }[]
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

      'GET /api/v1/connections/': [
        { method: 'GET', path: `/api/v1/connections/?customer=${b.workspace.customerId}`, expect: 'empty' },
        { method: 'GET', path: '/api/v1/connections/', expect: 'own' },
      ],
      'GET /api/v1/connections/{id}/': [{ method: 'GET', path: `/api/v1/connections/${b.connection}/`, expect: 404 }],
      'PATCH /api/v1/connections/{id}/': [
        { method: 'PATCH', path: `/api/v1/connections/${b.connection}/`, body: { account_name: 'hijacked' }, expect: 404 },
      ],
      'DELETE /api/v1/connections/{id}/': [{ method: 'DELETE', path: `/api/v1/connections/${b.connection}/`, expect: 404 }],

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
            send(attack.method, attack.method === 'GET' || attack.method === 'DELETE' ? undefined : attack.body, headers),
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
          for (const id of [b.audience, b.signal, b.connection, b.model]) {
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

    expect(await snapshot(b.workspace.customerId)).toEqual(before);
  });
});
