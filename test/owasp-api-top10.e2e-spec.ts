import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import jwt from 'jsonwebtoken';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS } from '../src/common/http/json-limits.js';
import type { Platform } from '../src/connections/connection.entity.js';
import { ConnectionsRepository } from '../src/connections/connections.repository.js';
import { TokenCipher } from '../src/connections/token-cipher.js';
import { UsersService } from '../src/users/users.service.js';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  inWorkspace,
  json,
  login,
  send,
  type TestUser,
  type Workspace,
} from './support/factories.js';
import { startTestApp, TEST_ENV, type TestApp } from './support/test-app.js';

/**
 * OWASP API Security Top 10 (2023), one `describe` per category: what an attacker would try against
 * this service, over real HTTP into the real app. docs/security.md maps every category to these
 * tests and to the suites that go deeper (tenant-isolation, auth, abuse, throttling, ...).
 */

const AUDIENCES = '/api/v1/audiences/';
const PEOPLE = '/api/v1/people/';
const SIGNALS = '/api/v1/signals/';
const MODELS = '/api/v1/ai-model-instances/';
const CONNECTIONS = '/api/v1/connections/';
const MCP_TOKENS = '/api/v1/mcp-tokens/';
const ME = '/api/v1/users/me/';
const WEBHOOKS = '/api/v1/webhooks/';
/** A valid integer id that no test creates. */
const MISSING_ID = 2_000_000_000;

interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  errors?: Record<string, string[]>;
  request_id: string;
}

interface Page<T = { id: number; customer: number }> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

const unique = () => randomBytes(4).toString('hex');

async function expectProblem(response: Response, status: number, code: string): Promise<Problem> {
  const body = (await response.json()) as Problem;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  return body;
}

/** An error body without the request id, the one part that differs between two identical refusals. */
async function comparable(response: Response): Promise<{ status: number; body: Omit<Problem, 'request_id'> }> {
  const body = (await response.json()) as Partial<Problem>;
  delete body.request_id;
  return { status: response.status, body: body as Omit<Problem, 'request_id'> };
}

async function created<T = { id: number; customer: number }>(response: Promise<Response>): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  if (answer.status !== 201) throw new Error(`expected 201, got ${answer.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * A real HTTP server that records what reaches it: it stands in for Google's and Meta's endpoints,
 * or for any host an attacker would like the service to call. `respond` decides the answer.
 */
class RecordingServer {
  readonly requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  respond: (request: IncomingMessage, response: ServerResponse) => void = RecordingServer.ok;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      this.requests.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      this.respond(request, response);
    });
  });

  static ok(this: void, _request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Writes a byte every 50 ms until the client goes away: a body that never ends. */
  drip(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => {
      if (response.destroyed || response.writableEnded) return this.clear(timer);
      response.write(' ');
    }, 50);
    this.timers.add(timer);
    response.on('close', () => this.clear(timer));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  reset(): void {
    this.requests.length = 0;
    this.respond = RecordingServer.ok;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) this.clear(timer);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private clear(timer: NodeJS.Timeout): void {
    clearInterval(timer);
    this.timers.delete(timer);
  }
}

/** A request with what fetch() will not send: a Host header, TRACE. */
function rawRequest(
  api: TestApp,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(path, api.baseUrl), { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function mcpRequest(api: TestApp, headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) {
  return api.request('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function mcpClient(api: TestApp, token: string): Promise<Client> {
  const client = new Client({ name: 'owasp-probe', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

function toolError(result: unknown): { code: string; detail: string; errors?: Record<string, string[]> } {
  const typed = result as { isError?: boolean; content: { text: string }[] };
  expect(typed.isError).toBe(true);
  return JSON.parse(typed.content[0]!.text) as { code: string; detail: string; errors?: Record<string, string[]> };
}

/** What an active signal on each platform needs in its config (SPEC 10.4). */
const SIGNAL_CONFIGS: Record<Platform, Record<string, string>> = {
  google_ads: { conversion_action_id: '123456789' },
  meta_ads: { pixel_id: '1234567890', event_name: 'Purchase', action_source: 'website' },
};

/** A connection as the OAuth flow stores it, its tokens encrypted by the app's own cipher. */
async function connectWithTokens(
  api: TestApp,
  workspace: Workspace,
  platform: Platform = 'google_ads',
): Promise<{ id: number; accessToken: string; refreshToken: string }> {
  const cipher = api.app.get(TokenCipher);
  const accessToken = `ya29-${randomBytes(12).toString('hex')}`;
  const refreshToken = `1//refresh-${randomBytes(12).toString('hex')}`;
  const connection = await inWorkspace(
    api,
    workspace.customerId,
    (connections) =>
      connections.insertWithTokens(
        {
          platform,
          externalAccountId: `${Math.floor(Math.random() * 1e10)}`,
          accountName: `Account ${unique()}`,
          status: 'active',
          scopes: platform === 'google_ads' ? ['https://www.googleapis.com/auth/adwords'] : ['ads_management', 'ads_read'],
          connectedBy: null,
          tokenExpiresAt: null,
          lastRefreshedAt: null,
        },
        { accessToken: cipher.encrypt(accessToken), refreshToken: platform === 'google_ads' ? cipher.encrypt(refreshToken) : null },
      ),
    ConnectionsRepository,
  );
  return { id: connection.id, accessToken, refreshToken };
}

/** One workspace with a credential of every kind and one object of every resource, linked together. */
interface Seeded {
  workspace: Workspace;
  editor: TestUser;
  viewer: TestUser;
  editorJwt: string;
  viewerJwt: string;
  writeKey: string;
  readKey: string;
  mcpToken: string;
  mcpTokenId: number;
  viewerMcpToken: string;
  model: number;
  connection: number;
  connectionTokens: string[];
  audience: number;
  signal: number;
  person: number;
  webhook: number;
}

async function seed(api: TestApp): Promise<Seeded> {
  const workspace = await createWorkspace(api);
  const editor = await createUser(api, workspace, { role: 'editor' });
  const viewer = await createUser(api, workspace, { role: 'viewer' });
  const editorJwt = (await login(api, editor)).access;
  const viewerJwt = (await login(api, viewer)).access;
  const token = await created<{ id: number; token: string }>(api.request(MCP_TOKENS, json({ name: 'agent' }, bearer(editorJwt))));
  const viewerToken = await created<{ token: string }>(api.request(MCP_TOKENS, json({ name: 'agent' }, bearer(viewerJwt))));
  const model = (await createModelInstance(api, workspace)).id;
  const connection = await connectWithTokens(api, workspace);
  const audience = await created(
    api.request(
      AUDIENCES,
      json(
        { name: `Seed audience ${unique()}`, source_type: 'model', model_instance: model, connections: [connection.id] },
        bearer(editorJwt),
      ),
    ),
  );
  const signal = await created(
    api.request(
      SIGNALS,
      json(
        {
          name: `Seed signal ${unique()}`,
          signal_type: 'score',
          model_instance: model,
          audience: audience.id,
          connection: connection.id,
          status: 1,
          config: { conversion_action_id: '123456789' },
        },
        bearer(editorJwt),
      ),
    ),
  );
  const people = { people: [{ external_id: `seed-${unique()}`, identifiers: { email: 'seed@example.com' }, traits: { seed: true } }] };
  expect((await api.request(`${PEOPLE}batch/`, json(people, bearer(editorJwt)))).status).toBe(200);
  const listed = (await (await api.request(PEOPLE, { headers: bearer(editorJwt) })).json()) as { results: { id: number }[] };
  const writeKey = (await createApiKey(api, workspace, { scope: 'write' })).key;
  const webhook = await created(
    api.request(WEBHOOKS, json({ url: 'http://127.0.0.1:9/seed', events: ['sync.failed'] }, apiKeyHeader(writeKey))),
  );
  return {
    webhook: webhook.id,
    person: listed.results[0]!.id,
    workspace,
    editor,
    viewer,
    editorJwt,
    viewerJwt,
    writeKey,
    readKey: (await createApiKey(api, workspace, { scope: 'read' })).key,
    mcpToken: token.token,
    mcpTokenId: token.id,
    viewerMcpToken: viewerToken.token,
    model,
    connection: connection.id,
    connectionTokens: [connection.accessToken, connection.refreshToken],
    audience: audience.id,
    signal: signal.id,
  };
}

const RESOURCE_TABLES = [
  'audiences',
  'audience_connections',
  'signals',
  'ai_model_instances',
  'connections',
  'people',
  'sync_runs',
  'audience_destinations',
  'sync_sent_members',
  'webhooks',
  'webhook_deliveries',
];

/** Every resource row of one workspace, as text: compared before and after an attack. */
async function snapshot(api: TestApp, customerId: number): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {};
  for (const table of RESOURCE_TABLES) {
    const rows: { row: string }[] = await api.dataSource.query(
      `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE customer_id = $1 ORDER BY row_to_json(t)::text`,
      [customerId],
    );
    result[table] = rows.map((row) => row.row);
  }
  return result;
}

// The app of the category under test, with two seeded workspaces A and B (see useSeededApp).
let api: TestApp;
let provider: RecordingServer;
let a: Seeded;
let b: Seeded;

/**
 * Gives the calling describe an app of its own with workspaces A and B, in the module's `api`,
 * `provider`, `a` and `b`. Limits are high enough that nothing is throttled but on purpose, and the
 * ad-platform endpoints point at `provider`, so nothing can reach Google or Meta and a test can
 * check that nothing was sent.
 *
 * One app at a time: passport keeps one strategy per name for the whole process, so the app started
 * last verifies every JWT and API key. A describe that needs a second app starts it in a nested
 * describe after its own tests, and each category starts afresh.
 */
function useSeededApp(): void {
  beforeAll(async () => {
    provider = new RecordingServer();
    await provider.start();
    api = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '100000',
      LOGIN_FAILURES_PER_EMAIL_AND_IP: '1000',
      LOGIN_FAILURES_PER_EMAIL: '1000',
      LOGIN_FAILURES_PER_IP: '1000',
      GOOGLE_OAUTH_REVOKE_URL: `${provider.url}/revoke`,
      META_GRAPH_URL: `${provider.url}/v19.0`,
    });
    a = await seed(api);
    b = await seed(api);
  });
  afterEach(() => api.clock.reset());
  afterAll(async () => {
    await api.close();
    await provider.stop();
  });
}

describe('API1:2023 Broken Object Level Authorization', () => {
  useSeededApp();

  const RESOURCES = [
    { name: 'audience', path: AUDIENCES, id: (s: Seeded) => s.audience, change: { name: 'Hijacked' } },
    { name: 'signal', path: SIGNALS, id: (s: Seeded) => s.signal, change: { name: 'Hijacked' } },
    { name: 'AI model instance', path: MODELS, id: (s: Seeded) => s.model, change: { name: 'Hijacked' } },
    { name: 'connection', path: CONNECTIONS, id: (s: Seeded) => s.connection, change: { account_name: 'Hijacked' } },
  ];

  it.each(RESOURCES)(
    "answers GET, PATCH and DELETE of workspace B's $name exactly as for an id that does not exist, and changes nothing",
    async (resource) => {
      const before = await snapshot(api, b.workspace.customerId);
      const credentials = { jwt: bearer(a.editorJwt), 'write key': apiKeyHeader(a.writeKey), 'read key': apiKeyHeader(a.readKey) };
      for (const [credential, headers] of Object.entries(credentials)) {
        for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
          const body = method === 'PATCH' ? resource.change : undefined;
          const theirs = await comparable(await api.request(`${resource.path}${resource.id(b)}/`, send(method, body, headers)));
          const missing = await comparable(await api.request(`${resource.path}${MISSING_ID}/`, send(method, body, headers)));
          expect({ credential, method, ...theirs }).toEqual({ credential, method, ...missing });
          // A read key is refused any write before the object is looked up; a read or a write caller gets 404.
          const refused = credential === 'read key' && method !== 'GET' ? 403 : 404;
          expect({ credential, method, status: theirs.status }).toEqual({ credential, method, status: refused });
        }
      }
      expect(await snapshot(api, b.workspace.customerId)).toEqual(before);
      expect(provider.requests).toEqual([]);
    },
  );

  it("answers workspace B's objects to A's MCP token exactly as ids that do not exist", async () => {
    const before = await snapshot(api, b.workspace.customerId);
    const client = await mcpClient(api, a.mcpToken);
    try {
      const calls: [string, (id: number) => Record<string, unknown>, number][] = [
        ['get_audience', (id) => ({ id }), b.audience],
        ['update_audience', (id) => ({ id, name: 'Hijacked' }), b.audience],
        ['get_signal', (id) => ({ id }), b.signal],
        ['update_signal', (id) => ({ id, status: 2 }), b.signal],
        ['get_ai_model_instance', (id) => ({ id }), b.model],
        ['get_connection', (id) => ({ id }), b.connection],
      ];
      for (const [name, args, id] of calls) {
        const theirs = toolError(await client.callTool({ name, arguments: args(id) }));
        const missing = toolError(await client.callTool({ name, arguments: args(MISSING_ID) }));
        expect({ name, ...theirs }).toEqual({ name, ...missing });
        expect({ name, code: theirs.code }).toEqual({ name, code: 'not_found' });
      }
    } finally {
      await client.close();
    }
    expect(await snapshot(api, b.workspace.customerId)).toEqual(before);
  });

  it("answers ?customer=<B> with an empty page, and never lists or counts B's objects", async () => {
    const customer = b.workspace.customerId;
    for (const headers of [bearer(a.editorJwt), apiKeyHeader(a.readKey)]) {
      for (const path of [`${AUDIENCES}?customer=${customer}`, `${CONNECTIONS}?customer=${customer}`]) {
        const response = await api.request(path, { headers });
        expect({ path, status: response.status, body: await response.json() }).toEqual({
          path,
          status: 200,
          body: { count: 0, next: null, previous: null, results: [] },
        });
      }
      // Filters that name B's objects find nothing; lists without a `customer` filter ignore the parameter.
      for (const path of [
        `${SIGNALS}?audience=${b.audience}`,
        `${SIGNALS}?connection=${b.connection}`,
        `${SIGNALS}?model_instance=${b.model}`,
        `${AUDIENCES}?search=${encodeURIComponent('Seed audience')}&page_size=100`,
        `${SIGNALS}?customer=${customer}&page_size=100`,
        `${MODELS}?customer=${customer}&page_size=100`,
      ]) {
        const response = await api.request(path, { headers });
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        const page = (await response.json()) as Page;
        expect({ path, customers: [...new Set(page.results.map((row) => row.customer))] }).toEqual({
          path,
          customers: page.count === 0 ? [] : [a.workspace.customerId],
        });
        expect(page.count).toBe(page.results.length);
      }
    }
  });

  it("refuses references to B's objects in A's bodies with the message given for ids that do not exist", async () => {
    const cases: [string, 'POST' | 'PATCH', string, (id: number) => Record<string, unknown>, number][] = [
      [AUDIENCES, 'POST', 'model_instance', (id) => ({ name: `Ref ${unique()}`, source_type: 'model', model_instance: id }), b.model],
      [AUDIENCES, 'POST', 'connections', (id) => ({ name: `Ref ${unique()}`, source_type: 'rules', connections: [id] }), b.connection],
      [`${AUDIENCES}${a.audience}/`, 'PATCH', 'connections', (id) => ({ connections: [id] }), b.connection],
      [SIGNALS, 'POST', 'audience', (id) => ({ name: 'Ref', signal_type: 'score', audience: id }), b.audience],
      [SIGNALS, 'POST', 'model_instance', (id) => ({ name: 'Ref', signal_type: 'score', model_instance: id }), b.model],
      [SIGNALS, 'POST', 'connection', (id) => ({ name: 'Ref', signal_type: 'score', connection: id }), b.connection],
      [`${SIGNALS}${a.signal}/`, 'PATCH', 'connection', (id) => ({ connection: id }), b.connection],
    ];
    const before = await snapshot(api, a.workspace.customerId);
    for (const headers of [bearer(a.editorJwt), apiKeyHeader(a.writeKey)]) {
      for (const [path, method, field, body, theirs] of cases) {
        for (const id of [theirs, MISSING_ID]) {
          const problem = await expectProblem(await api.request(path, send(method, body(id), headers)), 400, 'validation_error');
          expect({ path, method, field, errors: problem.errors }).toEqual({
            path,
            method,
            field,
            errors: { [field]: [`Invalid pk "${id}" - object does not exist.`] },
          });
        }
      }
    }
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
  });

  it("never replays workspace A's response to workspace B for the same Idempotency-Key and body", async () => {
    const key = `shared-${randomUUID()}`;
    const body = { name: `Idempotent ${key}`, source_type: 'rules' };
    const mine = await created(api.request(AUDIENCES, json(body, { ...bearer(a.editorJwt), 'idempotency-key': key })));
    const response = await api.request(AUDIENCES, json(body, { ...bearer(b.editorJwt), 'idempotency-key': key }));
    expect(response.status).toBe(201);
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    const theirs = (await response.json()) as { id: number; customer: number };
    expect(theirs).toMatchObject({ customer: b.workspace.customerId });
    expect(theirs.id).not.toBe(mine.id);
    // Keys are per identity: B's API key is not served B's user's response either, it really creates (a duplicate name here).
    const byKey = await api.request(AUDIENCES, json(body, { ...apiKeyHeader(b.writeKey), 'idempotency-key': key }));
    expect(byKey.headers.get('idempotent-replayed')).toBeNull();
    expect((await expectProblem(byKey, 400, 'validation_error')).errors).toEqual({ name: [expect.any(String)] });
  });

  it('lets workspace B reuse a name A already uses, so uniqueness reveals nothing across workspaces', async () => {
    const theirs = (await (await api.request(`${AUDIENCES}${a.audience}/`, { headers: bearer(a.editorJwt) })).json()) as { name: string };
    const mine = await created(api.request(AUDIENCES, json({ name: theirs.name, source_type: 'rules' }, apiKeyHeader(b.writeKey))));
    expect(mine.customer).toBe(b.workspace.customerId);
    const again = await expectProblem(
      await api.request(AUDIENCES, json({ name: theirs.name, source_type: 'rules' }, apiKeyHeader(b.writeKey))),
      400,
      'validation_error',
    );
    expect(Object.keys(again.errors!)).toEqual(['name']);
  });

  it("keeps a user's MCP tokens from every other user, in the same workspace and in another", async () => {
    for (const headers of [bearer(a.viewerJwt), bearer(b.editorJwt)]) {
      await expectProblem(await api.request(`${MCP_TOKENS}${a.mcpTokenId}/`, send('DELETE', undefined, headers)), 404, 'not_found');
      const listed = (await (await api.request(`${MCP_TOKENS}?page_size=100`, { headers })).json()) as Page<{ id: number }>;
      expect(listed.results.map((token) => token.id)).not.toContain(a.mcpTokenId);
    }
    expect((await mcpRequest(api, bearer(a.mcpToken))).status).toBe(200);
  });
});

describe('API2:2023 Broken Authentication', () => {
  useSeededApp();

  const OTHER_SECRET = 'another-secret-that-is-also-long-enough-for-hs256';
  const claimsOf = (access: string) => jwt.decode(access) as jwt.JwtPayload;
  const FORGERIES: [string, (access: string) => string][] = [
    ['alg "none"', (access) => jwt.sign(claimsOf(access), '', { algorithm: 'none' })],
    ['HS256 signed with another secret', (access) => jwt.sign(claimsOf(access), OTHER_SECRET, { algorithm: 'HS256' })],
    [
      'HS384 signed with the server secret (algorithm switch)',
      (access) => jwt.sign(claimsOf(access), TEST_ENV.JWT_SECRET, { algorithm: 'HS384' }),
    ],
    [
      'its payload moved to workspace B as an admin, signature kept',
      (access) => {
        const [header, , signature] = access.split('.');
        const payload = Buffer.from(JSON.stringify({ ...claimsOf(access), customer: b.workspace.customerId, role: 'admin' })).toString(
          'base64url',
        );
        return `${header}.${payload}.${signature}`;
      },
    ],
    ['its signature stripped', (access) => `${access.split('.').slice(0, 2).join('.')}.`],
    [
      'another issuer, signed with the server secret',
      (access) => jwt.sign({ ...claimsOf(access), iss: 'another-service' }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256' }),
    ],
    [
      'a session that never existed, signed with the server secret',
      (access) => jwt.sign({ ...claimsOf(access), sid: randomUUID() }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256' }),
    ],
  ];

  it.each(FORGERIES)('refuses an access token with %s: 401 with WWW-Authenticate', async (_forgery, forge) => {
    const { access } = await login(api, a.editor);
    const response = await api.request(AUDIENCES, { headers: bearer(forge(access)) });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('Bearer realm="api"');
    expect(((await response.json()) as Problem).code).toMatch(/^(authentication_failed|token_not_valid)$/);
  });

  it("takes the workspace and role from the login session, not from the token's claims", async () => {
    const { access } = await login(api, a.viewer);
    // Even re-signed with the server's own secret, claims naming B and admin change nothing.
    const escalated = jwt.sign({ ...claimsOf(access), customer: b.workspace.customerId, role: 'admin' }, TEST_ENV.JWT_SECRET, {
      algorithm: 'HS256',
    });
    const me = (await (await api.request(ME, { headers: bearer(escalated) })).json()) as { customer: number; role: string };
    expect(me).toMatchObject({ customer: a.workspace.customerId, role: 'viewer' });
    await expectProblem(
      await api.request(AUDIENCES, json({ name: 'Escalated', source_type: 'rules' }, bearer(escalated))),
      403,
      'permission_denied',
    );
    const page = (await (await api.request(`${AUDIENCES}?page_size=100`, { headers: bearer(escalated) })).json()) as Page;
    expect(page.results.every((row) => row.customer === a.workspace.customerId)).toBe(true);
  });

  it('refuses a refresh token as an access token, an access token after logout, and an expired one', async () => {
    const session = await login(api, a.editor);
    const asAccess = await api.request(AUDIENCES, { headers: bearer(session.refresh) });
    await expectProblem(asAccess, 401, 'token_not_valid');
    expect(asAccess.headers.get('www-authenticate')).toContain('Bearer');

    expect((await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(session.access) })).status).toBe(204);
    const afterLogout = await api.request(AUDIENCES, { headers: bearer(session.access) });
    await expectProblem(afterLogout, 401, 'token_not_valid');
    expect(afterLogout.headers.get('www-authenticate')).toContain('Bearer');
    await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: session.refresh })), 401, 'token_not_valid');

    const later = await login(api, a.editor);
    api.clock.advance(15 * 60 * 1000 + 1000);
    const expired = await api.request(AUDIENCES, { headers: bearer(later.access) });
    await expectProblem(expired, 401, 'token_not_valid');
    expect(expired.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('refuses a revoked MCP token, a revoked API key and an expired API key, each with its challenge', async () => {
    const token = await created<{ id: number; token: string }>(api.request(MCP_TOKENS, json({ name: 'short-lived' }, bearer(a.editorJwt))));
    expect((await api.request(`${MCP_TOKENS}${token.id}/`, send('DELETE', undefined, bearer(a.editorJwt)))).status).toBe(204);
    const revokedToken = await mcpRequest(api, bearer(token.token));
    await expectProblem(revokedToken, 401, 'authentication_failed');
    expect(revokedToken.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');

    const revoked = await createApiKey(api, a.workspace);
    await api.app.get(ApiKeysService).revoke(revoked.id);
    const expiring = await createApiKey(api, a.workspace, { expiresInDays: 1 });
    expect((await api.request(AUDIENCES, { headers: apiKeyHeader(expiring.key) })).status).toBe(200);
    api.clock.advance(24 * 3600 * 1000 + 1000);
    for (const key of [revoked.key, expiring.key]) {
      const response = await api.request(AUDIENCES, { headers: apiKeyHeader(key) });
      await expectProblem(response, 401, 'authentication_failed');
      expect(response.headers.get('www-authenticate')).toBe('Api-Key realm="api"');
    }
  });

  it.each<[string, () => string]>([
    ['an unknown scheme', () => 'Token abcdef'],
    ['"Bearer null"', () => 'Bearer null'],
    ['"Bearer undefined"', () => 'Bearer undefined'],
    ['an API key under the Bearer scheme', () => `Bearer ${a.writeKey}`],
    ['a JWT under the Api-Key scheme', () => `Api-Key ${a.editorJwt}`],
    ['an API key with trailing data', () => `Api-Key ${a.writeKey} x`],
    ['the public prefix of an API key alone', () => `Api-Key ${a.writeKey.split('.')[0]}`],
    ['two credentials in one header', () => `Bearer ${a.editorJwt}, Api-Key ${a.writeKey}`],
    ['a personal MCP token', () => `Bearer ${a.mcpToken}`],
    ['a 5 KB header', () => `Api-Key ${'k'.repeat(5 * 1024)}`],
  ])('refuses %s on a workspace route with 401 and WWW-Authenticate', async (_case, header) => {
    const response = await api.request(AUDIENCES, { headers: { authorization: header() } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/realm="api"/);
    expect(((await response.json()) as Problem).code).toMatch(/^(authentication_failed|token_not_valid)$/);
  });

  it('reads credentials only from the Authorization header: not from the query string, a cookie or X-Api-Key', async () => {
    const attempts: [string, RequestInit][] = [
      [`${AUDIENCES}?access_token=${a.editorJwt}`, {}],
      [`${AUDIENCES}?api_key=${encodeURIComponent(a.writeKey)}`, {}],
      [AUDIENCES, { headers: { cookie: `access=${a.editorJwt}; token=${a.editorJwt}` } }],
      [AUDIENCES, { headers: { 'x-api-key': a.writeKey } }],
      [AUDIENCES, { headers: { 'x-access-token': a.editorJwt } }],
    ];
    for (const [path, init] of attempts) {
      const response = await api.request(path, init);
      await expectProblem(response, 401, 'not_authenticated');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api", Api-Key realm="api"');
    }
  });

  it('answers a wrong password, an unknown email and a deactivated user alike: status, headers, body and time', async () => {
    const leaver = await createUser(api, a.workspace);
    await api.app.get(UsersService).deactivate(leaver.email);
    const attempts = {
      'wrong password': { email: a.editor.email, password: 'not the password' },
      'unknown email': { email: `nobody-${unique()}@example.com`, password: 'not the password' },
      'deactivated user': { email: leaver.email, password: leaver.password },
    };
    const answers: Record<string, unknown> = {};
    const durations: Record<string, number[]> = {};
    // Interleaved, so that load on the machine weighs on every kind alike.
    for (let round = 0; round < 5; round++) {
      for (const [kind, body] of Object.entries(attempts)) {
        const started = performance.now();
        const response = await api.request('/api/v1/jwt/create/', json(body));
        (durations[kind] ??= []).push(performance.now() - started);
        answers[kind] = { ...(await comparable(response)), challenge: response.headers.get('www-authenticate') };
      }
    }
    expect(answers['unknown email']).toEqual(answers['wrong password']);
    expect(answers['deactivated user']).toEqual(answers['wrong password']);
    expect(answers['wrong password']).toMatchObject({ status: 401, body: { code: 'authentication_failed' } });
    // Without a password hash to verify, an unknown email would answer many times faster.
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    expect(median(durations['unknown email']!)).toBeGreaterThan(median(durations['wrong password']!) * 0.4);
    expect(median(durations['deactivated user']!)).toBeGreaterThan(median(durations['wrong password']!) * 0.4);
  });
});

describe('API3:2023 Broken Object Property Level Authorization', () => {
  useSeededApp();

  const FOREIGN_DATE = '2000-01-01T00:00:00.000Z';

  it("ignores read-only fields in create bodies: id, customer, size, version and timestamps are the server's", async () => {
    const forged = { id: b.audience, customer: b.workspace.customerId, created_at: FOREIGN_DATE, updated_at: FOREIGN_DATE };
    const before = await snapshot(api, b.workspace.customerId);
    const bodies: [string, Record<string, unknown>, Record<string, unknown>][] = [
      [AUDIENCES, { name: `Forged ${unique()}`, source_type: 'rules', size: 1_000_000 }, { size: null }],
      [SIGNALS, { name: 'Forged', signal_type: 'score' }, {}],
      [MODELS, { name: 'Forged', model_type: 'churn', base_model: 'gbm-v3', version: 99 }, { version: 0 }],
    ];
    for (const [path, body, server] of bodies) {
      const made = await created<Record<string, unknown>>(api.request(path, json({ ...body, ...forged }, apiKeyHeader(a.writeKey))));
      expect(made).toMatchObject({ customer: a.workspace.customerId, ...server });
      expect(made.id).not.toBe(b.audience);
      expect(made.created_at).not.toBe(FOREIGN_DATE);
      const stored = await api.request(`${path}${made.id as number}/`, { headers: apiKeyHeader(a.readKey) });
      expect(await stored.json()).toEqual(made);
    }
    expect(await snapshot(api, b.workspace.customerId)).toEqual(before);
  });

  it('ignores read-only fields in updates, so no object moves to another workspace or changes state behind the rules', async () => {
    const before = { a: await snapshot(api, a.workspace.customerId), b: await snapshot(api, b.workspace.customerId) };
    const forged = { id: b.audience, customer: b.workspace.customerId, created_at: FOREIGN_DATE, updated_at: FOREIGN_DATE };
    const updates: [string, Record<string, unknown>][] = [
      [`${AUDIENCES}${a.audience}/`, { ...forged, size: 5 }],
      [`${SIGNALS}${a.signal}/`, forged],
      [`${MODELS}${a.model}/`, { ...forged, version: 42 }],
      [
        `${CONNECTIONS}${a.connection}/`,
        {
          ...forged,
          platform: 'meta_ads',
          external_account_id: 'attacker-account',
          status: 'revoked',
          scopes: ['everything'],
          connected_by: b.editor.id,
          token_expires_at: FOREIGN_DATE,
          last_refreshed_at: FOREIGN_DATE,
        },
      ],
    ];
    for (const [path, body] of updates) {
      const current = await (await api.request(path, { headers: bearer(a.editorJwt) })).json();
      const response = await api.request(path, send('PATCH', body, bearer(a.editorJwt)));
      expect({ path, status: response.status, body: await response.json() }).toEqual({ path, status: 200, body: current });
    }
    expect({ a: await snapshot(api, a.workspace.customerId), b: await snapshot(api, b.workspace.customerId) }).toEqual(before);
  });

  it('keeps a revoked connection revoked whatever a PATCH says, so no signal can be activated on it', async () => {
    const revoked = await createConnection(api, a.workspace, { status: 'revoked' });
    const patched = await api.request(`${CONNECTIONS}${revoked.id}/`, send('PATCH', { status: 'active' }, bearer(a.editorJwt)));
    expect(((await patched.json()) as { status: string }).status).toBe('revoked');
    const activation = await expectProblem(
      await api.request(
        SIGNALS,
        json(
          { name: 'On a dead grant', signal_type: 'score', connection: revoked.id, status: 1, config: SIGNAL_CONFIGS.google_ads },
          bearer(a.editorJwt),
        ),
      ),
      400,
      'validation_error',
    );
    expect(Object.keys(activation.errors!)).toEqual(['status']);
  });

  it('refuses status 3 (failed), which only the delivery pipeline sets', async () => {
    const problem = await expectProblem(
      await api.request(`${SIGNALS}${a.signal}/`, send('PATCH', { status: 3 }, bearer(a.editorJwt))),
      400,
      'validation_error',
    );
    expect(Object.keys(problem.errors!)).toEqual(['status']);
  });

  it('refuses fields outside the contract (customer_id, role, scope, owner, token, expires_at) under their names', async () => {
    const before = await snapshot(api, a.workspace.customerId);
    const attempts: [string, 'POST' | 'PATCH', Record<string, unknown>, string[]][] = [
      [AUDIENCES, 'POST', { name: 'x', source_type: 'rules', customer_id: b.workspace.customerId, owner: 1 }, ['customer_id', 'owner']],
      [`${SIGNALS}${a.signal}/`, 'PATCH', { customer_id: b.workspace.customerId }, ['customer_id']],
      [
        `${CONNECTIONS}${a.connection}/`,
        'PATCH',
        { access_token: 'x', refresh_token: 'y', customer_id: 1 },
        ['access_token', 'customer_id', 'refresh_token'],
      ],
      [
        MCP_TOKENS,
        'POST',
        { name: 'x', token: 'mcp_chosen_by_me', expires_at: '2199-01-01T00:00:00Z', user: b.editor.id },
        ['expires_at', 'token', 'user'],
      ],
      [
        '/api/v1/jwt/create/',
        'POST',
        { email: a.editor.email, password: a.editor.password, role: 'admin', scope: 'write' },
        ['role', 'scope'],
      ],
    ];
    for (const [path, method, body, fields] of attempts) {
      const problem = await expectProblem(await api.request(path, send(method, body, bearer(a.editorJwt))), 400, 'validation_error');
      expect({ path, fields: Object.keys(problem.errors!).sort() }).toEqual({ path, fields });
      for (const field of fields) expect(problem.errors![field]).toEqual(['Unknown field.']);
    }
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
  });

  // SPEC section 3 lists `status_reason` and `reauthorize_required` as read-only connection fields,
  // which a body may echo back and which are then ignored (once a finding; fixed with the OAuth flows).
  it('ignores the read-only status_reason and reauthorize_required in a connection PATCH, as SPEC section 3 says', async () => {
    const path = `${CONNECTIONS}${a.connection}/`;
    const current = (await (await api.request(path, { headers: bearer(a.editorJwt) })).json()) as Record<string, unknown>;
    expect(current).toHaveProperty('status_reason');
    expect(current).toHaveProperty('reauthorize_required');
    const response = await api.request(path, send('PATCH', { status_reason: null, reauthorize_required: false }, bearer(a.editorJwt)));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(current);
  });

  it('never answers with a password hash, key hash, token hash, OAuth token or its ciphertext', async () => {
    const hex = (value: Buffer | null) => (value ? [value.toString('hex'), value.toString('base64'), value.toString('base64url')] : []);
    const secrets: string[] = [...a.connectionTokens, a.writeKey, a.readKey];
    const users: { password_hash: string }[] = await api.dataSource.query('SELECT password_hash FROM users WHERE customer_id = $1', [
      a.workspace.customerId,
    ]);
    secrets.push(...users.map((user) => user.password_hash));
    const keys: { key_hash: Buffer }[] = await api.dataSource.query('SELECT key_hash FROM api_keys WHERE customer_id = $1', [
      a.workspace.customerId,
    ]);
    const tokens: { token_hash: Buffer }[] = await api.dataSource.query('SELECT token_hash FROM mcp_tokens WHERE customer_id = $1', [
      a.workspace.customerId,
    ]);
    const ciphertexts: { access_token_encrypted: Buffer | null; refresh_token_encrypted: Buffer | null }[] = await api.dataSource.query(
      'SELECT access_token_encrypted, refresh_token_encrypted FROM connections WHERE customer_id = $1',
      [a.workspace.customerId],
    );
    secrets.push(...keys.flatMap((row) => hex(row.key_hash)), ...tokens.flatMap((row) => hex(row.token_hash)));
    secrets.push(...ciphertexts.flatMap((row) => [...hex(row.access_token_encrypted), ...hex(row.refresh_token_encrypted)]));
    const webhookSecrets: { secret: Buffer }[] = await api.dataSource.query('SELECT secret FROM webhooks WHERE customer_id = $1', [
      a.workspace.customerId,
    ]);
    secrets.push(...webhookSecrets.flatMap((row) => hex(row.secret)));

    const answers: string[] = [];
    for (const headers of [bearer(a.editorJwt), apiKeyHeader(a.readKey)]) {
      for (const path of [AUDIENCES, SIGNALS, MODELS, CONNECTIONS, WEBHOOKS])
        answers.push(await (await api.request(`${path}?page_size=100`, { headers })).text());
      for (const path of [
        `${AUDIENCES}${a.audience}/`,
        `${SIGNALS}${a.signal}/`,
        `${MODELS}${a.model}/`,
        `${CONNECTIONS}${a.connection}/`,
        `${WEBHOOKS}${a.webhook}/`,
        `${WEBHOOKS}${a.webhook}/deliveries/`,
      ]) {
        answers.push(await (await api.request(path, { headers })).text());
      }
      answers.push(await (await api.request(`${CONNECTIONS}${a.connection}/`, send('PATCH', { account_name: '' }, headers))).text());
    }
    for (const path of [ME, MCP_TOKENS]) answers.push(await (await api.request(path, { headers: bearer(a.editorJwt) })).text());
    answers.push(await (await api.request('/api/v1/jwt/create/', json({ email: a.editor.email, password: a.editor.password }))).text());
    const client = await mcpClient(api, a.mcpToken);
    try {
      for (const [name, args] of [
        ['whoami', {}],
        ['get_connection', { id: a.connection }],
        ['list_connections', {}],
        ['get_audience', { id: a.audience }],
      ] as const) {
        answers.push(JSON.stringify(await client.callTool({ name, arguments: args })));
      }
    } finally {
      await client.close();
    }

    const FORBIDDEN_KEY = /password|hash|secret|encrypted|ciphertext|access_token|refresh_token/i;
    const keysOf = (value: unknown): string[] =>
      typeof value !== 'object' || value === null
        ? []
        : Object.entries(value).flatMap(([key, child]) => [...(Array.isArray(value) ? [] : [key]), ...keysOf(child)]);
    for (const answer of answers) {
      for (const secret of secrets) expect(answer.includes(secret)).toBe(false);
      expect(keysOf(JSON.parse(answer)).filter((key) => FORBIDDEN_KEY.test(key))).toEqual([]);
    }
  });
});

describe('API4:2023 Unrestricted Resource Consumption', () => {
  useSeededApp();

  it.each([
    ['an unauthenticated token endpoint', '/api/v1/jwt/create/', () => ({})],
    ['a resource POST', AUDIENCES, () => bearer(a.editorJwt)],
    ['/mcp', '/mcp', () => ({ ...bearer(a.mcpToken), accept: 'application/json, text/event-stream' })],
  ])('answers a 2 MiB body on %s with 413 before any other work', async (_case, path, headers) => {
    const before = await snapshot(api, a.workspace.customerId);
    const body = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), source_type: 'rules' });
    await expectProblem(
      await api.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers() }, body }),
      413,
      'payload_too_large',
    );
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
  });

  const deep = `{"rules":${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}}`;
  const wide = `{${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, index) => `"k${index}":1`).join(',')}}`;

  it.each([
    ['POST', AUDIENCES],
    ['PATCH', 'signal'],
    ['POST', MCP_TOKENS],
    ['POST', '/api/v1/jwt/refresh/'],
    ['POST', '/mcp'],
  ])('refuses JSON nested too deep or with too many keys on %s %s with 400 parse_error', async (method, target) => {
    const path = target === 'signal' ? `${SIGNALS}${a.signal}/` : target;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...bearer(target === '/mcp' ? a.mcpToken : a.editorJwt),
    };
    for (const body of [deep, wide]) await expectProblem(await api.request(path, { method, headers, body }), 400, 'parse_error');
  });

  it('limits JSON fields to 64 KiB and 10 levels of nesting', async () => {
    let nested: unknown = 1;
    for (let level = 0; level < 11; level++) nested = { a: nested };
    const attempts: [string, 'POST' | 'PATCH', Record<string, unknown>, string][] = [
      [AUDIENCES, 'POST', { name: `Big ${unique()}`, source_type: 'rules', rules: { blob: 'x'.repeat(65 * 1024) } }, 'rules'],
      [AUDIENCES, 'POST', { name: `Deep ${unique()}`, source_type: 'rules', rules: nested }, 'rules'],
      [`${SIGNALS}${a.signal}/`, 'PATCH', { config: { blob: 'x'.repeat(65 * 1024) } }, 'config'],
      [`${MODELS}${a.model}/`, 'PATCH', { parameters: nested }, 'parameters'],
    ];
    for (const [path, method, body, field] of attempts) {
      const problem = await expectProblem(await api.request(path, send(method, body, bearer(a.editorJwt))), 400, 'validation_error');
      expect({ path, fields: Object.keys(problem.errors!) }).toEqual({ path, fields: [field] });
    }
  });

  it('clamps page_size to 100, refuses sizes that are not positive integers, and bounds search', async () => {
    const workspace = await createWorkspace(api);
    for (let index = 0; index < 105; index++) await createModelInstance(api, workspace);
    const headers = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
    const page = (await (await api.request(`${MODELS}?page_size=1000000`, { headers })).json()) as Page;
    expect(page.count).toBe(105);
    expect(page.results).toHaveLength(100);
    expect(Object.fromEntries(new URL(page.next!).searchParams)).toEqual({ page_size: '1000000', page: '2' });
    for (const size of ['-1', '0', '1e3', '99999999999999999999', 'all']) {
      await expectProblem(await api.request(`${MODELS}?page_size=${size}`, { headers }), 400, 'validation_error');
    }
    await expectProblem(await api.request(`${MODELS}?page=99999999999`, { headers }), 404, 'not_found');
    const search = await expectProblem(
      await api.request(`${AUDIENCES}?search=${'a'.repeat(10_000)}`, { headers }),
      400,
      'validation_error',
    );
    expect(Object.keys(search.errors!)).toEqual(['search']);
  });

  describe('with RATE_LIMIT_PER_MINUTE=5 and MCP_TOKENS_PER_USER=2', () => {
    let limited: TestApp;
    beforeAll(async () => {
      limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5', MCP_TOKENS_PER_USER: '2' });
    });
    // A fresh minute for every test: the counters are per minute and the clock is the app's.
    beforeEach(() => limited.clock.advance(61_000));
    afterAll(() => limited.close());

    it("answers a credential's 6th request of the minute with 429, Retry-After and RateLimit, and no other credential's", async () => {
      const workspace = await createWorkspace(limited);
      const first = apiKeyHeader((await createApiKey(limited, workspace)).key);
      const second = apiKeyHeader((await createApiKey(limited, workspace)).key);
      for (let request = 0; request < 5; request++) {
        const response = await limited.request(AUDIENCES, { headers: first });
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
        expect(response.headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${4 - request};t=\\d+$`));
      }
      const throttled = await limited.request(AUDIENCES, { headers: first });
      await expectProblem(throttled, 429, 'throttled');
      const retryAfter = Number(throttled.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(throttled.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
      expect((await limited.request(AUDIENCES, { headers: second })).status).toBe(200);
      limited.clock.advance(61_000);
      expect((await limited.request(AUDIENCES, { headers: first })).status).toBe(200);
    });

    it('limits the unauthenticated token endpoints per client IP', async () => {
      for (let request = 0; request < 5; request++) {
        expect((await limited.request('/api/v1/jwt/verify/', json({ token: `guess.${request}.x` }))).status).toBe(401);
      }
      const throttled = await limited.request('/api/v1/jwt/verify/', json({ token: 'guess.6.x' }));
      await expectProblem(throttled, 429, 'throttled');
      expect(throttled.headers.get('retry-after')).toBeTruthy();
    });

    // Each token is a credential that lives up to a year: an unbounded number is unbounded exposure.
    it("caps a user's live MCP tokens at MCP_TOKENS_PER_USER: one more is a 409 until one is revoked", async () => {
      const workspace = await createWorkspace(limited);
      const user = bearer((await login(limited, await createUser(limited, workspace, { role: 'viewer' }))).access);
      const kept = await created(limited.request(MCP_TOKENS, json({ name: 'one' }, user)));
      await created(limited.request(MCP_TOKENS, json({ name: 'two' }, user)));
      await expectProblem(await limited.request(MCP_TOKENS, json({ name: 'three' }, user)), 409, 'conflict');
      expect((await limited.request(`${MCP_TOKENS}${kept.id}/`, send('DELETE', undefined, user))).status).toBe(204);
      await created(limited.request(MCP_TOKENS, json({ name: 'three' }, user)));
    });
  });
});

describe('API5:2023 Broken Function Level Authorization', () => {
  useSeededApp();

  const ROUTES = JSON.parse(readFileSync(new URL('./route-security.json', import.meta.url), 'utf8')) as string[];
  const routesWith = (suffix: RegExp) => ROUTES.filter((row) => suffix.test(row)).map((row) => row.split(' → ')[0]!);

  /** One request per write route of test/route-security.json, on workspace A's objects. */
  function writeRequests(): Record<string, { path: string; body?: Record<string, unknown> }> {
    return {
      'POST /api/v1/audiences': { path: AUDIENCES, body: { name: 'Made by a reader', source_type: 'rules' } },
      'PATCH /api/v1/audiences/:id': { path: `${AUDIENCES}${a.audience}/`, body: { name: 'Changed by a reader' } },
      'DELETE /api/v1/audiences/:id': { path: `${AUDIENCES}${a.audience}/` },
      'POST /api/v1/signals': { path: SIGNALS, body: { name: 'Made by a reader', signal_type: 'score' } },
      'PATCH /api/v1/signals/:id': { path: `${SIGNALS}${a.signal}/`, body: { status: 2 } },
      'DELETE /api/v1/signals/:id': { path: `${SIGNALS}${a.signal}/` },
      'POST /api/v1/ai-model-instances': { path: MODELS, body: { name: 'Made by a reader', model_type: 'churn', base_model: 'gbm-v3' } },
      'PATCH /api/v1/ai-model-instances/:id': { path: `${MODELS}${a.model}/`, body: { status: 'archived' } },
      'DELETE /api/v1/ai-model-instances/:id': { path: `${MODELS}${a.model}/` },
      'PATCH /api/v1/connections/:id': { path: `${CONNECTIONS}${a.connection}/`, body: { account_name: 'Changed by a reader' } },
      'DELETE /api/v1/connections/:id': { path: `${CONNECTIONS}${a.connection}/` },
      'POST /api/v1/people/batch': { path: `${PEOPLE}batch/`, body: { people: [{ external_id: 'made-by-a-reader' }] } },
      'PATCH /api/v1/people/:id(^\\d+$)': { path: `${PEOPLE}${a.person}/`, body: { traits: { changed: true } } },
      'DELETE /api/v1/people/:id(^\\d+$)': { path: `${PEOPLE}${a.person}/` },
      // Refused by the guard before the body is read, so any body shows the 403.
      'POST /api/v1/imports': { path: '/api/v1/imports/?target=people', body: {} },
      'POST /api/v1/audiences/:id/members': {
        path: `${AUDIENCES}${a.audience}/members/`,
        body: { action: 'add', people: [{ external_id: 'made-by-a-reader' }] },
      },
      'POST /api/v1/ai-model-instances/:id/scores': {
        path: `${MODELS}${a.model}/scores/`,
        body: { scores: [{ external_id: 'x', score: 0.5 }] },
      },
      'POST /api/v1/syncs': { path: '/api/v1/syncs/', body: { audience: a.audience } },
      // Refused by the guard before the run is looked up, so any id shows the 403.
      'POST /api/v1/syncs/:id/cancel': { path: '/api/v1/syncs/1/cancel/' },
      'POST /api/v1/signals/:id/events': {
        path: `${SIGNALS}${a.signal}/events/`,
        body: { events: [{ event_id: 'made-by-a-reader', event_time: new Date().toISOString(), gclid: 'x' }] },
      },
    };
  }

  /** One request per admin-only write route (webhooks, SPEC 10.5), on workspace A's objects. */
  function adminWriteRequests(): Record<string, { path: string; body?: Record<string, unknown> }> {
    return {
      'POST /api/v1/webhooks': { path: WEBHOOKS, body: { url: 'http://127.0.0.1:9/reader', events: ['sync.failed'] } },
      'PATCH /api/v1/webhooks/:id': { path: `${WEBHOOKS}${a.webhook}/`, body: { url: 'http://127.0.0.1:9/moved-by-a-reader' } },
      'DELETE /api/v1/webhooks/:id': { path: `${WEBHOOKS}${a.webhook}/` },
      'POST /api/v1/webhooks/:id/rotate-secret': { path: `${WEBHOOKS}${a.webhook}/rotate-secret/` },
      'POST /api/v1/webhooks/:id/test': { path: `${WEBHOOKS}${a.webhook}/test/` },
    };
  }

  it('refuses every admin-only write route to an editor JWT too, changing nothing', async () => {
    const requests = adminWriteRequests();
    expect(Object.keys(requests).sort()).toEqual(routesWith(/\(admin or write key\)$/).sort());
    const before = await snapshot(api, a.workspace.customerId);
    for (const headers of [bearer(a.editorJwt), bearer(a.viewerJwt), apiKeyHeader(a.readKey)]) {
      for (const [route, request] of Object.entries(requests)) {
        const method = route.split(' ')[0] as 'POST' | 'PATCH' | 'DELETE';
        const response = await api.request(request.path, send(method, request.body, headers));
        expect({ route, status: response.status }).toEqual({ route, status: 403 });
        expect(((await response.json()) as Problem).code).toBe('permission_denied');
      }
    }
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
  });

  it('refuses every write route to a viewer JWT and a read-scoped API key with 403, changing nothing', async () => {
    const requests = writeRequests();
    expect(Object.keys(requests).sort()).toEqual(routesWith(/\(admin\/editor or write key\)$/).sort());
    const before = await snapshot(api, a.workspace.customerId);
    for (const headers of [bearer(a.viewerJwt), apiKeyHeader(a.readKey)]) {
      for (const [route, request] of Object.entries(requests)) {
        const method = route.split(' ')[0] as 'POST' | 'PATCH' | 'DELETE';
        const response = await api.request(request.path, send(method, request.body, headers));
        expect({ route, status: response.status }).toEqual({ route, status: 403 });
        expect(((await response.json()) as Problem).code).toBe('permission_denied');
      }
    }
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
    expect(provider.requests).toEqual([]);
  });

  it("refuses a viewer's MCP token every write tool, changing nothing", async () => {
    const before = await snapshot(api, a.workspace.customerId);
    const client = await mcpClient(api, a.viewerMcpToken);
    try {
      for (const [name, args] of [
        ['create_audience', { name: 'Agent-made', source_type: 'rules' }],
        ['update_audience', { id: a.audience, name: 'Agent-changed' }],
        ['create_signal', { name: 'Agent-made', signal_type: 'score' }],
        ['update_signal', { id: a.signal, status: 2 }],
      ] as const) {
        expect({ name, code: toolError(await client.callTool({ name, arguments: args })).code }).toEqual({
          name,
          code: 'permission_denied',
        });
      }
    } finally {
      await client.close();
    }
    expect(await snapshot(api, a.workspace.customerId)).toEqual(before);
  });

  it('refuses API keys on every personal route with 403: a key is not a user', async () => {
    const requests: Record<string, { path: string; body?: Record<string, unknown> }> = {
      'GET /api/v1/users/me': { path: ME },
      'GET /api/v1/mcp-tokens': { path: MCP_TOKENS },
      'POST /api/v1/mcp-tokens': { path: MCP_TOKENS, body: { name: 'for a script' } },
      'DELETE /api/v1/mcp-tokens/:id': { path: `${MCP_TOKENS}${a.mcpTokenId}/` },
      'POST /api/v1/jwt/logout': { path: '/api/v1/jwt/logout/' },
      'POST /oauth/connections/:platform/start': { path: '/oauth/connections/google-ads/start' },
    };
    expect(Object.keys(requests).sort()).toEqual(routesWith(/→ personal$/).sort());
    for (const key of [a.writeKey, a.readKey]) {
      for (const [route, request] of Object.entries(requests)) {
        const method = route.split(' ')[0] as 'GET' | 'POST' | 'DELETE';
        const response = await api.request(request.path, send(method, request.body, apiKeyHeader(key)));
        expect({ route, status: response.status }).toEqual({ route, status: 403 });
      }
    }
    expect((await mcpRequest(api, bearer(a.mcpToken))).status).toBe(200);
  });

  it('takes only a personal MCP token on /mcp, and an MCP token nowhere else', async () => {
    for (const headers of [bearer(a.editorJwt), apiKeyHeader(a.writeKey), { authorization: `Api-Key ${a.mcpToken}` }]) {
      const response = await mcpRequest(api, headers);
      await expectProblem(response, 401, 'authentication_failed');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');
    }
    for (const path of [AUDIENCES, ME, MCP_TOKENS]) {
      const response = await api.request(path, { headers: bearer(a.mcpToken) });
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
      expect(((await response.json()) as Problem).code).toMatch(/^(authentication_failed|token_not_valid)$/);
    }
  });

  it('offers no HTTP route to operator functions: customers, users, API keys and connections are made elsewhere', async () => {
    const admin = bearer((await login(api, await createUser(api, a.workspace, { role: 'admin' }))).access);
    const attempts: [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', Record<string, unknown> | undefined, number][] = [
      ['/api/v1/api-keys/', 'POST', { name: 'mine', scope: 'write' }, 404],
      ['/api/v1/api-keys/', 'GET', undefined, 404],
      ['/api/v1/customers/', 'POST', { name: 'Another workspace' }, 404],
      ['/api/v1/users/', 'POST', { email: 'new@example.com', password: 'x', role: 'admin' }, 404],
      ['/api/v1/users/', 'GET', undefined, 404],
      [ME, 'PATCH', { role: 'admin' }, 405],
      [ME, 'DELETE', undefined, 405],
      [CONNECTIONS, 'POST', { platform: 'google_ads', external_account_id: '1', account_name: 'Planted' }, 405],
    ];
    for (const [path, method, body, status] of attempts) {
      const response = await api.request(path, send(method, body, admin));
      expect({ path, method, status: response.status }).toEqual({ path, method, status });
    }
    const me = (await (await api.request(ME, { headers: admin })).json()) as { role: string };
    expect(me.role).toBe('admin');
  });

  it('ignores method-override headers and parameters: a read stays a read', async () => {
    const path = `${AUDIENCES}${a.audience}/`;
    for (const header of ['x-http-method-override', 'x-http-method', 'x-method-override']) {
      expect((await api.request(path, { headers: { ...bearer(a.viewerJwt), [header]: 'DELETE' } })).status).toBe(200);
      const post = await api.request(path, { method: 'POST', headers: { ...bearer(a.editorJwt), [header]: 'DELETE' } });
      expect(post.status).toBe(405);
    }
    expect((await api.request(`${path}?_method=DELETE`, { headers: bearer(a.viewerJwt) })).status).toBe(200);
    expect((await api.request(path, { headers: bearer(a.viewerJwt) })).status).toBe(200);
  });
});

describe('API6:2023 Unrestricted Access to Sensitive Business Flows', () => {
  let guarded: TestApp;
  beforeAll(async () => {
    guarded = await startTestApp({
      LOGIN_FAILURES_PER_EMAIL_AND_IP: '3',
      LOGIN_FAILURES_PER_EMAIL: '1000',
      LOGIN_FAILURES_PER_IP: '8',
      LOGIN_FAILURE_WINDOW_SECONDS: '600',
      AUTHENTICATION_FAILURES_PER_IP_PER_MINUTE: '4',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
  });
  // Every counter of an earlier test has run out.
  beforeEach(() => guarded.clock.advance(601_000));
  afterAll(() => guarded.close());

  const attempt = (email: string, password: string) => guarded.request('/api/v1/jwt/create/', json({ email, password }));

  it("stops guessing one account's password after 3 failures from one client, even with the right password", async () => {
    const workspace = await createWorkspace(guarded);
    const owner = await createUser(guarded, workspace);
    for (let guess = 0; guess < 3; guess++) expect((await attempt(owner.email, `guess-${guess}`)).status).toBe(401);
    const locked = await attempt(owner.email, owner.password);
    await expectProblem(locked, 429, 'throttled');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // Only that email is locked for this client: another account still logs in.
    const other = await createUser(guarded, workspace);
    expect((await attempt(other.email, other.password)).status).toBe(200);
  });

  it('locks an unknown email exactly like a real one, so the lockout does not reveal which accounts exist', async () => {
    const owner = await createUser(guarded, await createWorkspace(guarded));
    const ghost = `ghost-${unique()}@example.com`;
    for (const email of [owner.email, ghost])
      for (let guess = 0; guess < 3; guess++) expect((await attempt(email, 'guess')).status).toBe(401);
    const answers = [];
    for (const email of [owner.email, ghost]) {
      const response = await attempt(email, 'guess');
      const { status, body } = await comparable(response);
      answers.push({
        status,
        body: { ...body, detail: body.detail.replace(/\d+/g, 'N') },
        retryAfter: Boolean(response.headers.get('retry-after')),
      });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ status: 429, body: { code: 'throttled' }, retryAfter: true });
  });

  it('stops password spraying: one client trying a password on many accounts is throttled whatever the email', async () => {
    const victim = await createUser(guarded, await createWorkspace(guarded));
    for (let account = 0; account < 8; account++)
      expect((await attempt(`user${account}-${unique()}@example.com`, 'Winter2026!')).status).toBe(401);
    const sprayed = await attempt(victim.email, victim.password);
    await expectProblem(sprayed, 429, 'throttled');
    expect(sprayed.headers.get('retry-after')).toBeTruthy();
  });

  it('stops guessing API keys, JWTs and MCP tokens from one client IP, but serves its valid credentials', async () => {
    const workspace = await createWorkspace(guarded);
    const { key } = await createApiKey(guarded, workspace);
    const guesses = [
      () => guarded.request(AUDIENCES, { headers: apiKeyHeader(`guessed1234.${randomBytes(24).toString('base64url')}`) }),
      () => guarded.request(AUDIENCES, { headers: bearer(jwt.sign({ sub: '1' }, 'guessed-secret-guessed-secret-guessed')) }),
      () => mcpRequest(guarded, bearer(`mcp_guessed12345_${randomBytes(32).toString('base64url')}`)),
      () => guarded.request(AUDIENCES),
    ];
    for (const guess of guesses) expect((await guess()).status).toBe(401);
    for (const guess of guesses) {
      const throttled = await guess();
      await expectProblem(throttled, 429, 'throttled');
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect((await guarded.request(AUDIENCES, { headers: apiKeyHeader(key) })).status).toBe(200);
  });
});

describe('API7:2023 Server Side Request Forgery', () => {
  useSeededApp();

  const OTHER_KEY = 'a-key-the-attacker-controls-and-serves-from-jku';

  /** Every property of a request body and every parameter of the API document, with its schema. */
  function inputsOf(document: {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; schema?: object }[]; requestBody?: { content: Record<string, { schema: object }> } }>
    >;
    components: { schemas: Record<string, object> };
  }): { where: string; name: string; schema: { format?: string; type?: string } }[] {
    const inputs: { where: string; name: string; schema: { format?: string; type?: string } }[] = [];
    const visit = (where: string, schema: Record<string, unknown> | undefined, seen: Set<string>): void => {
      if (!schema) return;
      if (typeof schema.$ref === 'string') {
        const name = schema.$ref.split('/').pop()!;
        if (seen.has(name)) return;
        return visit(where, document.components.schemas[name] as Record<string, unknown>, new Set([...seen, name]));
      }
      for (const key of ['allOf', 'anyOf', 'oneOf'] as const)
        for (const part of (schema[key] as object[] | undefined) ?? []) visit(where, part as Record<string, unknown>, seen);
      if (schema.items) visit(`${where}[]`, schema.items as Record<string, unknown>, seen);
      for (const [name, child] of Object.entries((schema.properties as Record<string, Record<string, unknown>> | undefined) ?? {})) {
        inputs.push({ where, name, schema: child });
        visit(`${where}.${name}`, child, seen);
      }
    };
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const parameter of operation.parameters ?? [])
          inputs.push({ where, name: parameter.name, schema: (parameter.schema ?? {}) as object });
        for (const content of Object.values(operation.requestBody?.content ?? {}))
          visit(where, content.schema as Record<string, unknown>, new Set());
      }
    }
    return inputs;
  }

  it('takes no URL from a client but webhook endpoints: no other body field or parameter is a URL or host', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as Parameters<typeof inputsOf>[0];
    const inputs = inputsOf(document);
    expect(inputs.length).toBeGreaterThan(20);
    const urlLike = inputs.filter(
      (input) =>
        ['uri', 'url', 'uri-reference', 'iri', 'hostname', 'ipv4', 'ipv6'].includes(input.schema.format ?? '') ||
        /url|uri|href|link|callback|webhook|redirect|endpoint|host|domain/i.test(input.name),
    );
    // Social login takes the redirect URI the provider sends the browser back to, and Google's
    // `iss`: neither is ever fetched. The redirect URI must be one of SOCIAL_AUTH_ALLOWED_REDIRECT_URIS
    // exactly, and `iss` must equal the configured issuer (test/social-login).
    expect(urlLike.map((input) => `${input.where} ${input.name}`)).toEqual([
      'GET /api/v1/auth/o/{provider}/ redirect_uri',
      // `iss` in the query string, then both once per body media type: JSON and form.
      'POST /api/v1/auth/o/{provider}/ iss',
      'POST /api/v1/auth/o/{provider}/ iss',
      'POST /api/v1/auth/o/{provider}/ redirect_uri',
      'POST /api/v1/auth/o/{provider}/ iss',
      'POST /api/v1/auth/o/{provider}/ redirect_uri',
      // The page a signal event happened on (SPEC 10.4): stored and passed to Meta as given, never fetched.
      'POST /api/v1/signals/{id}/events/.events[] event_source_url',
      // A webhook's URL is fetched, by design (SPEC 10.5): in production it must be https and every
      // address it resolves to public, checked on create and update and again before each delivery,
      // which connects to the address it checked (test/webhooks.e2e-spec.ts refuses each private class).
      'POST /api/v1/webhooks/ url',
      'PATCH /api/v1/webhooks/{id}/ url',
      // The web interface's finish of the same flow (JSON only), with the same checks.
      'POST /app/session/social/{provider} iss',
      'POST /app/session/social/{provider} redirect_uri',
    ]);
  });

  it('refuses URL fields where an attacker would try them, so a grant cannot be revoked at a host they choose', async () => {
    const problem = await expectProblem(
      await api.request(
        `${CONNECTIONS}${a.connection}/`,
        send(
          'PATCH',
          { revoke_url: 'http://169.254.169.254/', redirect_uri: 'http://evil.example/', webhook_url: 'http://evil.example/' },
          bearer(a.editorJwt),
        ),
      ),
      400,
      'validation_error',
    );
    expect(Object.keys(problem.errors!).sort()).toEqual(['redirect_uri', 'revoke_url', 'webhook_url']);
  });

  it('never fetches a URL it is handed: JWT key URLs (jku, x5u) and URLs stored in JSON fields', async () => {
    const target = new RecordingServer();
    await target.start();
    try {
      for (const header of [{ jku: `${target.url}/jwks.json` }, { x5u: `${target.url}/cert.pem` }, { kid: `${target.url}/key` }]) {
        const token = jwt.sign({ sub: String(a.editor.id) }, OTHER_KEY, { algorithm: 'HS256', header: { alg: 'HS256', ...header } });
        expect((await api.request(AUDIENCES, { headers: bearer(token) })).status).toBe(401);
      }
      await created(
        api.request(
          AUDIENCES,
          json(
            { name: `Links ${unique()}`, source_type: 'rules', rules: { trait: 'callback_url', op: 'eq', value: `${target.url}/rules` } },
            bearer(a.editorJwt),
          ),
        ),
      );
      await created(
        api.request(
          SIGNALS,
          json(
            // Without a connection, config is free-form (SPEC 10.4 checks it only for a connection's platform).
            { name: 'Links', signal_type: 'score', config: { webhook_url: `${target.url}/config`, endpoint: target.url } },
            bearer(a.editorJwt),
          ),
        ),
      );
      const model = await api.request(
        `${MODELS}${a.model}/`,
        send('PATCH', { parameters: { training_data_url: `${target.url}/data` } }, bearer(a.editorJwt)),
      );
      expect(model.status).toBe(200);
      // Proving that nothing happens needs a moment of real time: a fetch started in the background
      // would reach the local server within milliseconds.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(target.requests).toEqual([]);
      expect(provider.requests).toEqual([]);
    } finally {
      await target.stop();
    }
  });
});

describe('API8:2023 Security Misconfiguration', () => {
  useSeededApp();

  const API_HEADERS = {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cache-control': 'no-store',
  };
  const headersOf = (response: Response) => Object.fromEntries(Object.keys(API_HEADERS).map((name) => [name, response.headers.get(name)]));

  it.each<[string, () => Promise<Response>, number]>([
    ['a 201 create', () => api.request(AUDIENCES, json({ name: `Headers ${unique()}`, source_type: 'rules' }, bearer(a.editorJwt))), 201],
    [
      'a 204 delete',
      async () => {
        const made = await created(api.request(AUDIENCES, json({ name: `Gone ${unique()}`, source_type: 'rules' }, bearer(a.editorJwt))));
        return api.request(`${AUDIENCES}${made.id}/`, send('DELETE', undefined, bearer(a.editorJwt)));
      },
      204,
    ],
    ['a 403', () => api.request(AUDIENCES, json({ name: 'x', source_type: 'rules' }, bearer(a.viewerJwt))), 403],
    ['a 405', () => api.request(CONNECTIONS, json({}, bearer(a.editorJwt))), 405],
    [
      'a 413',
      () => api.request(AUDIENCES, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(1_100_000)}"` }),
      413,
    ],
    [
      'a 415',
      () => api.request(AUDIENCES, { method: 'POST', headers: { 'content-type': 'text/html', ...bearer(a.editorJwt) }, body: '<b>x</b>' }),
      415,
    ],
    ['an MCP refusal', () => mcpRequest(api, {}), 401],
  ])('puts nosniff, a restrictive CSP and no-store on %s', async (_case, call, status) => {
    const response = await call();
    expect(response.status).toBe(status);
    expect(headersOf(response)).toEqual(API_HEADERS);
  });

  // /mcp answers are written by the MCP SDK on the raw response (reply.hijack()); the controller
  // copies the headers set so far onto it, so per-user workspace data is never cached or sniffed.
  it('puts nosniff, a restrictive CSP and no-store on a successful MCP answer', async () => {
    const response = await mcpRequest(api, bearer(a.mcpToken));
    expect(response.status).toBe(200);
    expect(headersOf(response)).toEqual(API_HEADERS);
  });

  // SPEC section 9: X-Request-Id on every answer, the hijacked MCP one included.
  it('returns X-Request-Id on a successful MCP answer (SPEC section 9)', async () => {
    const response = await mcpRequest(api, { ...bearer(a.mcpToken), 'x-request-id': 'mcp-trace.1' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('mcp-trace.1');
  });

  it('never answers with a stack trace, a framework banner or an internal detail', async () => {
    const calls: [string, RequestInit][] = [
      ['/api/v1/no-such-route/', {}],
      ['/api/v1/audiences/%E0%A4%A/', { headers: bearer(a.editorJwt) }],
      [AUDIENCES, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a.editorJwt) }, body: '{"name": "x",' }],
      [AUDIENCES, json({ name: { $gt: '' }, source_type: ['rules'], rules: 'not an object' }, bearer(a.editorJwt))],
      [`${AUDIENCES}?ordering=name;DROP TABLE audiences&page_size=abc`, { headers: bearer(a.editorJwt) }],
      [`${SIGNALS}?status=1 OR 1=1`, { headers: bearer(a.editorJwt) }],
      [`${AUDIENCES}${'9'.repeat(30)}/`, { headers: bearer(a.editorJwt) }],
      [`${MODELS}${a.model}/`, send('PATCH', { status: 'nonsense', parameters: [] }, bearer(a.editorJwt))],
      [
        '/mcp',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(a.mcpToken) },
          body: '{"jsonrpc":',
        },
      ],
    ];
    for (const [path, init] of calls) {
      const response = await api.request(path, init);
      const text = await response.text();
      expect({ path, status: response.status < 500 }).toEqual({ path, status: true });
      expect({ path, type: response.headers.get('content-type') }).toEqual({
        path,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(text).not.toMatch(
        /\bat .+:\d+:\d+|node_modules|\/src\/|\.ts\b|QueryFailedError|typeorm|postgres|SELECT |stack|Cannot (GET|POST)/i,
      );
      expect(response.headers.get('x-powered-by')).toBeNull();
      expect(response.headers.get('server')).toBeNull();
    }
  });

  it('treats SQL in filters and bodies as data', async () => {
    const name = `Robert'); DROP TABLE audiences; -- ${unique()}`;
    const made = await created<{ id: number; name: string }>(
      api.request(AUDIENCES, json({ name, source_type: 'rules' }, bearer(a.editorJwt))),
    );
    expect(made.name).toBe(name);
    for (const search of ["' OR '1'='1", "x' UNION SELECT password_hash FROM users --", '%_%\\']) {
      const page = (await (
        await api.request(`${AUDIENCES}?search=${encodeURIComponent(search)}`, { headers: bearer(a.editorJwt) })
      ).json()) as Page;
      expect({ search, count: page.count }).toEqual({ search, count: 0 });
    }
    const found = (await (
      await api.request(`${AUDIENCES}?search=${encodeURIComponent('DROP TABLE')}`, { headers: bearer(a.editorJwt) })
    ).json()) as Page;
    expect(found.results.map((row) => row.id)).toEqual([made.id]);
  });

  it('keeps CORS off by default: no Access-Control-Allow-Origin for any origin, preflight or not', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const preflight = await api.request(AUDIENCES, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const simple = await api.request(AUDIENCES, { headers: { origin, ...bearer(a.editorJwt) } });
      expect(simple.status).toBe(200);
      expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('answers TRACE with 405 and never echoes the request back', async () => {
    const answer = await rawRequest(api, 'TRACE', AUDIENCES, { ...bearer(a.editorJwt), cookie: 'session=secret-cookie' });
    expect(answer.status).toBe(405);
    expect(answer.text).not.toContain(a.editorJwt);
    expect(answer.text).not.toContain('secret-cookie');
  });

  describe('in production (NODE_ENV=production, ALLOWED_HOSTS=127.0.0.1)', () => {
    let production: TestApp;
    let key: Record<string, string>;
    beforeAll(async () => {
      production = await startTestApp({ NODE_ENV: 'production', ALLOWED_HOSTS: '127.0.0.1' });
      const workspace = await createWorkspace(production);
      key = apiKeyHeader((await createApiKey(production, workspace)).key);
      for (const name of ['First', 'Second']) await created(production.request(AUDIENCES, json({ name, source_type: 'rules' }, key)));
    });
    afterAll(() => production.close());

    it('hides /metrics: 404 as if it did not exist, whatever the credential', async () => {
      for (const headers of [{}, key, { authorization: 'Bearer metrics' }]) {
        await expectProblem(await production.request('/metrics', { headers }), 404, 'not_found');
      }
    });

    it('refuses a Host outside ALLOWED_HOSTS where links are built, and does not believe X-Forwarded-Host', async () => {
      const forged = await rawRequest(production, 'GET', `${AUDIENCES}?page_size=1`, { ...key, host: 'evil.example' });
      expect(forged.status).toBe(400);
      expect(JSON.parse(forged.text)).toMatchObject({ code: 'validation_error', errors: { host: ['This Host is not served here.'] } });
      const forwarded = await rawRequest(production, 'GET', `${AUDIENCES}?page_size=1`, { ...key, 'x-forwarded-host': 'evil.example' });
      expect(forwarded.status).toBe(200);
      expect(new URL((JSON.parse(forwarded.text) as Page).next!).host).toBe(new URL(production.baseUrl).host);
    });

    it('answers errors in production without a stack or internal detail either', async () => {
      for (const [path, init] of [
        ['/nope', {}],
        [AUDIENCES, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body: '{' }],
      ] as [string, RequestInit][]) {
        const response = await production.request(path, init);
        expect(response.status).toBeLessThan(500);
        expect(Object.keys((await response.json()) as object).sort()).toEqual(['code', 'detail', 'request_id', 'status', 'title', 'type']);
      }
    });
  });
});

describe('API9:2023 Improper Inventory Management', () => {
  useSeededApp();

  /** Every method and path Fastify serves (HEAD aside), read from its route tree. */
  function servedRoutes(): string[] {
    const fastify = api.app.getHttpAdapter().getInstance();
    const parents: string[] = [];
    const routes: string[] = [];
    for (const line of fastify.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
      if (!match) continue;
      const depth = match[1]!.length / 4;
      const methods = match[3]?.split(', ').filter((method) => method !== 'HEAD') ?? [];
      // The tree prints a child by what it adds to its parent; a wildcard child adds "*" after a "/".
      const parent = parents[depth - 1] ?? '';
      const path = [`${parent}${match[2]}`, `${parent}/${match[2]}`].find(
        (candidate) => methods.length === 0 || fastify.hasRoute({ method: methods[0] as 'GET', url: candidate }),
      )!;
      parents[depth] = path;
      parents.length = depth + 1;
      for (const method of methods) routes.push(`${method} ${path}`);
    }
    return routes;
  }
  // A parameter may carry a pattern (`:id(^\\d+$)` on people), which the document leaves out.
  const normal = (route: string) => route.replace(/:(\w+)(?:\([^/]*\))?/g, '{$1}').replace(/\/$/, '');

  it('serves no route the API document does not list, apart from the named operational ones', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => normal(`${method.toUpperCase()} ${path}`)),
    );
    const served = servedRoutes().map(normal);
    expect(served.length).toBeGreaterThan(documented.length);
    // Documented routes that are not served would be a client generator's dead ends.
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
    // Outside the document by design: the document and its viewer, the orchestrator's probes,
    // /mcp, which describes itself to MCP clients (tools/list; SPEC section 7), and the web
    // interface's pages and built files (their names carry a content hash).
    const undocumented = served.filter((route) => !documented.includes(route) && !route.startsWith('GET /app/assets/'));
    expect(undocumented.sort()).toEqual(
      [
        'GET /api/docs',
        'GET /api/docs/*',
        'GET /api/docs/LICENSE',
        'GET /api/docs/docs/swagger-ui-init.js',
        'GET /api/docs/index.html',
        'GET /api/docs/swagger-ui-init.js',
        'GET /api/schema',
        'GET /app',
        'GET /app/*',
        'GET /app/favicon.svg',
        'GET /healthz',
        'GET /metrics',
        'GET /readyz',
        'POST /mcp',
      ].sort(),
    );
  });

  it('documents the security of every operation as the guard enforces it (test/route-security.json)', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    };
    const SCHEMES: Record<string, string[]> = {
      public: [],
      public_or_personal: ['jwt'],
      personal: ['jwt'],
      workspace: ['jwt', 'api_key'],
      workspace_admin: ['jwt', 'api_key'],
    };
    const ROUTES = JSON.parse(readFileSync(new URL('./route-security.json', import.meta.url), 'utf8')) as string[];
    const expected: Record<string, string[]> = {};
    for (const row of ROUTES) {
      const [route, access] = row.split(' → ') as [string, string];
      const kind = access.split(' ')[0]!;
      if (kind in SCHEMES) expected[normal(route)] = SCHEMES[kind]!;
    }
    const actual: Record<string, string[]> = {};
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        actual[normal(`${method.toUpperCase()} ${path}`)] = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      }
    }
    // Operational routes (healthz, readyz, metrics) and /mcp are not in the document.
    for (const route of ['GET /healthz', 'GET /readyz', 'GET /metrics']) delete expected[route];
    expect(actual).toEqual(expected);
  });

  it.each([
    '/api/v2/audiences/',
    '/api/v0/audiences/',
    '/api/audiences/',
    '/v1/audiences/',
    '/api/V1/audiences/',
    '/api/v1.1/audiences/',
    '/api/v1/audiences.json',
  ])('answers %s with 404, even with a valid credential', async (path) => {
    for (const headers of [bearer(a.editorJwt), apiKeyHeader(a.writeKey)])
      await expectProblem(await api.request(path, { headers }), 404, 'not_found');
  });

  it.each([
    '/graphql',
    '/.env',
    '/.git/config',
    '/admin/',
    '/actuator/env',
    '/api/v1/debug/',
    '/api/v1/internal/',
    '/swagger.json',
    '/api/v1/openapi.json',
  ])('keeps no debug, legacy or shadow endpoint: %s is a 404', async (path) => {
    await expectProblem(await api.request(path, { headers: bearer(a.editorJwt) }), 404, 'not_found');
  });

  const TRICKS = [
    '/api/docs/../../package.json',
    '/api/docs/%2e%2e/%2e%2e/package.json',
    '/api/docs/..%2f..%2fpackage.json',
    '/api/docs/%2e%2e%2f%2e%2e%2fopenapi.json',
    '/api/docs/%252e%252e/package.json',
    '/api/docs/....//....//package.json',
    '/api/docs//package.json',
  ];

  it('serves no file from outside Swagger UI under /api/docs/, whatever the path tricks', async () => {
    for (const path of TRICKS) {
      const answer = await rawRequest(api, 'GET', path);
      expect({ path, refused: [400, 403, 404].includes(answer.status) }).toEqual({ path, refused: true });
      expect(answer.headers['content-type']).toContain('application/problem+json');
      expect(answer.text).not.toContain('audience-signal-platform-api');
    }
  });

  // SPEC section 5 says any unknown path is a 404, and docs/api-conventions.md says any other path
  // under /api/docs/ is a 404; a path with an empty segment ("//") there was answered 403 by the
  // static file plugin, before only the page's own files were served.
  it('answers every path trick under /api/docs/ with 404 like any unknown path (SPEC section 5)', async () => {
    for (const path of TRICKS) expect({ path, status: (await rawRequest(api, 'GET', path)).status }).toEqual({ path, status: 404 });
  });

  // The wildcard route under /api/docs/ served the whole swagger-ui-dist package directory: its
  // package.json (the exact Swagger UI version, for fingerprinting), README.md, the Node entry points
  // and the stock swagger-initializer.js (pointing at the Petstore). Now only what the page loads.
  it("serves under /api/docs/ only what Swagger UI needs in a browser, not the npm package's files", async () => {
    for (const file of ['package.json', 'README.md', 'index.js', 'absolute-path.js', 'swagger-initializer.js']) {
      expect({ file, status: (await api.request(`/api/docs/${file}`)).status }).toEqual({ file, status: 404 });
    }
  });
});

describe('API10:2023 Unsafe Consumption of APIs', () => {
  const TIMEOUT_MS = 400;
  const platform = new RecordingServer();
  const elsewhere = new RecordingServer();
  let consumer: TestApp;
  let workspace: Workspace;
  let editor: Record<string, string>;

  beforeAll(async () => {
    await platform.start();
    await elsewhere.start();
    consumer = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '100000',
      GOOGLE_OAUTH_REVOKE_URL: `${platform.url}/revoke`,
      META_GRAPH_URL: `${platform.url}/v19.0`,
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    workspace = await createWorkspace(consumer);
    editor = bearer((await login(consumer, await createUser(consumer, workspace))).access);
  });
  beforeEach(() => {
    platform.reset();
    elsewhere.reset();
  });
  afterAll(async () => {
    await consumer.close();
    await platform.stop();
    await elsewhere.stop();
  });

  /** A connection with tokens and an active signal on it; deleting it must go through whatever the platform answers. */
  async function connectionInUse(kind: Platform) {
    const connection = await connectWithTokens(consumer, workspace, kind);
    const signal = await created(
      consumer.request(
        SIGNALS,
        json(
          { name: `On ${connection.id}`, signal_type: 'score', connection: connection.id, status: 1, config: SIGNAL_CONFIGS[kind] },
          editor,
        ),
      ),
    );
    return { ...connection, signal: signal.id };
  }

  async function expectCleanDeletion(connection: { id: number; signal: number; accessToken: string; refreshToken: string }) {
    const response = await consumer.request(`${CONNECTIONS}${connection.id}/`, send('DELETE', undefined, editor));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    for (const header of ['set-cookie', 'www-authenticate', 'location', 'x-platform']) expect(response.headers.get(header)).toBeNull();
    expect((await consumer.request(`${CONNECTIONS}${connection.id}/`, { headers: editor })).status).toBe(404);
    const signal = (await (await consumer.request(`${SIGNALS}${connection.signal}/`, { headers: editor })).json()) as {
      connection: number | null;
      status: number;
    };
    expect(signal).toMatchObject({ connection: null, status: 2 });
    return response;
  }

  const ANSWERS: [string, Platform, (request: IncomingMessage, response: ServerResponse) => void][] = [
    [
      'HTML garbage echoing the token, with a cookie',
      'google_ads',
      (_request, response) => {
        const echoed = platform.requests.at(-1)?.body ?? '';
        response
          .writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'platform=1', 'x-platform': 'echo' })
          .end(`<html>${echoed}</html>`);
      },
    ],
    [
      'a 500 with a JSON error',
      'meta_ads',
      (_request, response) => response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom","code":1}}'),
    ],
    [
      'a 401 with its own WWW-Authenticate',
      'google_ads',
      (_request, response) =>
        response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"error":"invalid_token"}'),
    ],
    ['a reset connection', 'meta_ads', (request) => request.socket.destroy()],
    [
      'a JSON body that is not what the API documents',
      'google_ads',
      (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('[1,2,{"__proto__":{"admin":true}}]'),
    ],
  ];

  it.each(ANSWERS)('deletes the connection and passes nothing on when the platform answers %s', async (_case, kind, answer) => {
    platform.respond = answer;
    const connection = await connectionInUse(kind);
    await expectCleanDeletion(connection);
    expect(platform.requests).toHaveLength(1);
  });

  it("does not follow a platform's redirect, so the token goes nowhere else", async () => {
    platform.respond = (_request, response) => response.writeHead(307, { location: `${elsewhere.url}/collect` }).end();
    for (const kind of ['google_ads', 'meta_ads'] as const) {
      const connection = await connectionInUse(kind);
      await expectCleanDeletion(connection);
    }
    expect(platform.requests).toHaveLength(2);
    expect(elsewhere.requests).toEqual([]);
  });

  it.each<[string, (request: IncomingMessage, response: ServerResponse) => void]>([
    ['never answers', () => undefined],
    ['answers 200 and never ends its body', (_request, response) => platform.drip(response)],
  ])('bounds a platform that %s by PROVIDER_TIMEOUT_MS', async (_case, answer) => {
    platform.respond = answer;
    const connection = await connectionInUse('google_ads');
    const started = performance.now();
    await expectCleanDeletion(connection);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 4000);
  });
});
