import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectionStatus, Platform } from '../src/connections/connection.entity.js';
import { ConnectionsRepository } from '../src/connections/connections.repository.js';
import { TokenCipher } from '../src/connections/token-cipher.js';
import {
  bearer,
  createApiKey,
  createUser,
  createWorkspace,
  inWorkspace,
  login,
  send,
  type TestUser,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const BASE = '/api/v1/connections/';
const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const DATAMANAGER = 'https://www.googleapis.com/auth/datamanager';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const FIELDS = [
  'id',
  'customer',
  'platform',
  'external_account_id',
  'account_name',
  'status',
  'status_reason',
  'reauthorize_required',
  'scopes',
  'customer_match_terms_accepted',
  'connected_by',
  'token_expires_at',
  'last_refreshed_at',
  'created_at',
  'updated_at',
];

interface ProviderRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: string;
}

/**
 * A real HTTP server standing in for Google's revoke endpoint and Meta's Graph API: it records what
 * it receives and answers as they document (Google: 200 `{}`; Meta: 200 `{"success":true}`), or
 * fails or hangs on demand.
 */
class FakeProvider {
  readonly requests: ProviderRequest[] = [];
  mode: 'ok' | 'error' | 'hang' = 'ok';
  private readonly server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const url = new URL(request.url!, 'http://provider');
      this.requests.push({
        method: request.method!,
        path: url.pathname,
        query: url.searchParams,
        contentType: request.headers['content-type'],
        body,
      });
      if (this.mode === 'hang') return;
      if (this.mode === 'error') {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal_failure"}');
        return;
      }
      const answer = url.pathname === '/revoke' ? {} : { success: true };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  reset(): void {
    this.mode = 'ok';
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

interface ConnectionBody {
  id: number;
  customer: number;
  platform: string;
  external_account_id: string;
  account_name: string;
  status: string;
  status_reason: string | null;
  reauthorize_required: boolean;
  scopes: string[];
  customer_match_terms_accepted: boolean;
  connected_by: number | null;
  token_expires_at: string | null;
  last_refreshed_at: string | null;
  created_at: string;
  updated_at: string;
}

describe('connections (SPEC section 3)', () => {
  const provider = new FakeProvider();
  let api: TestApp;
  let workspace: Workspace;
  let editor: TestUser;
  let auth: Record<string, string>;

  beforeAll(async () => {
    await provider.start();
    api = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '100000',
      GOOGLE_OAUTH_REVOKE_URL: `${provider.url}/revoke`,
      META_GRAPH_URL: `${provider.url}/v19.0`,
      // Generous, so a loaded machine does not time out the answering provider; the hang test waits this long.
      PROVIDER_TIMEOUT_MS: '1500',
    });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    auth = bearer((await login(api, editor)).access);
  });
  afterAll(async () => {
    await api.close();
    await provider.stop();
  });
  beforeEach(() => provider.reset());

  const get = (path: string, headers = auth) => api.request(path, { headers });
  const patch = (id: number, body: unknown, headers = auth) => api.request(`${BASE}${id}/`, send('PATCH', body, headers));
  const remove = (id: number, headers = auth) => api.request(`${BASE}${id}/`, send('DELETE', undefined, headers));

  let counter = 0;
  /** A connection as the OAuth flow stores it: tokens encrypted through the app's own cipher. */
  async function connect(
    owner: Workspace,
    options: {
      platform?: Platform;
      status?: ConnectionStatus;
      accountName?: string;
      accessToken?: string;
      refreshToken?: string;
      scopes?: string[];
      connectedBy?: number;
      tokenExpiresAt?: Date;
      lastRefreshedAt?: Date;
    } = {},
  ): Promise<number> {
    const cipher = api.app.get(TokenCipher);
    const platform = options.platform ?? 'google_ads';
    const connection = await inWorkspace(
      api,
      owner.customerId,
      (connections) =>
        connections.insertWithTokens(
          {
            platform,
            externalAccountId: `${++counter}${randomBytes(3).toString('hex')}`,
            accountName: options.accountName ?? `Account ${counter}`,
            status: options.status ?? 'active',
            scopes: options.scopes ?? (platform === 'google_ads' ? [ADWORDS, DATAMANAGER] : ['ads_management', 'ads_read']),
            connectedBy: options.connectedBy ?? null,
            tokenExpiresAt: options.tokenExpiresAt ?? null,
            lastRefreshedAt: options.lastRefreshedAt ?? null,
          },
          {
            accessToken: options.accessToken === undefined ? null : cipher.encrypt(options.accessToken),
            refreshToken: options.refreshToken === undefined ? null : cipher.encrypt(options.refreshToken),
          },
        ),
      ConnectionsRepository,
    );
    return connection.id;
  }

  const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

  async function errorsOf(response: Response): Promise<Record<string, string[]>> {
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; errors: Record<string, string[]> };
    expect(body.code).toBe('validation_error');
    return body.errors;
  }

  async function rowOf(id: number): Promise<Record<string, unknown> | undefined> {
    const rows: Record<string, unknown>[] = await api.dataSource.query('SELECT * FROM connections WHERE id = $1', [id]);
    return rows[0];
  }

  describe('read', () => {
    it('shows exactly the documented fields, and no token', async () => {
      const access = secret('ya29');
      const refresh = secret('1//refresh');
      const id = await connect(workspace, {
        accountName: 'Acme EU',
        accessToken: access,
        refreshToken: refresh,
        connectedBy: editor.id,
        tokenExpiresAt: new Date('2030-01-02T03:04:05.678Z'),
        lastRefreshedAt: new Date('2029-12-31T23:59:59.001Z'),
      });
      const response = await get(`${BASE}${id}/`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        id,
        customer: workspace.customerId,
        platform: 'google_ads',
        external_account_id: expect.any(String),
        account_name: 'Acme EU',
        status: 'active',
        status_reason: null,
        reauthorize_required: false,
        scopes: [ADWORDS, DATAMANAGER],
        customer_match_terms_accepted: false,
        connected_by: editor.id,
        token_expires_at: '2030-01-02T03:04:05.678Z',
        last_refreshed_at: '2029-12-31T23:59:59.001Z',
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect(text).not.toContain(access);
      expect(text).not.toContain(refresh);
      expect(text).not.toMatch(/access_token|refresh_token|encrypted/);

      const list = await (await get(`${BASE}?page_size=100`)).text();
      expect(list).not.toContain(access);
      expect(list).not.toMatch(/access_token|refresh_token|encrypted/);
      for (const row of (JSON.parse(list) as { results: object[] }).results) expect(Object.keys(row).sort()).toEqual([...FIELDS].sort());
    });

    it('shows a connection without tokens (registered by the CLI) with null timestamps', async () => {
      const id = await connect(workspace, { platform: 'meta_ads' });
      expect(await (await get(`${BASE}${id}/`)).json()).toMatchObject({
        platform: 'meta_ads',
        scopes: ['ads_management', 'ads_read'],
        connected_by: null,
        token_expires_at: null,
        last_refreshed_at: null,
      });
    });

    it('stores tokens only as AES-GCM ciphertext tagged with the key id', async () => {
      const access = secret('ya29');
      const id = await connect(workspace, { accessToken: access });
      const row = (await rowOf(id))!;
      const stored = row.access_token_encrypted as Buffer;
      expect(Buffer.isBuffer(stored)).toBe(true);
      expect(stored.includes(Buffer.from(access))).toBe(false);
      expect(stored[0]).toBe(1);
      expect(stored.subarray(1, 9).equals(createHash('sha256').update(api.config.encryptionKey).digest().subarray(0, 8))).toBe(true);
      expect(api.app.get(TokenCipher).decrypt(stored)).toBe(access);
      expect(row.refresh_token_encrypted).toBeNull();
    });

    it.each(['abc', '0', '-1', '99999999999', '1.5', '987654'])('answers id %s with 404', async (id) => {
      const response = await get(`${BASE}${id}/`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    });
  });

  describe('methods', () => {
    it('answers POST on the collection with 405 and Allow: GET, HEAD, creating nothing', async () => {
      const [{ count: before }] = (await api.dataSource.query('SELECT count(*)::int AS count FROM connections')) as { count: number }[];
      for (const path of [BASE, '/api/v1/connections']) {
        const response = await api.request(
          path,
          send('POST', { platform: 'google_ads', external_account_id: '1', account_name: 'Sneaky' }, auth),
        );
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await response.json()) as { code: string }).code).toBe('method_not_allowed');
      }
      const [{ count: after }] = (await api.dataSource.query('SELECT count(*)::int AS count FROM connections')) as { count: number }[];
      expect(after).toBe(before);
    });

    it('documents GET, PATCH and DELETE with stable operation ids, no POST, and says how connections are made', async () => {
      const document = (await (await api.request('/api/schema/')).json()) as {
        paths: Record<string, Record<string, { operationId: string; description?: string; requestBody?: unknown }>>;
        components: { schemas: Record<string, { properties: Record<string, unknown> }> };
      };
      const collection = Object.entries(document.paths).find(([path]) => /^\/api\/v1\/connections\/?$/.test(path))![1];
      const detail = Object.entries(document.paths).find(([path]) => /^\/api\/v1\/connections\/\{id\}\/?$/.test(path))![1];
      expect(Object.fromEntries(Object.entries(collection).map(([method, operation]) => [method, operation.operationId]))).toEqual({
        get: 'connections_list',
      });
      expect(Object.fromEntries(Object.entries(detail).map(([method, operation]) => [method, operation.operationId]))).toEqual({
        get: 'connections_retrieve',
        patch: 'connections_partial_update',
        delete: 'connections_destroy',
      });
      expect(collection.get!.description).toMatch(/OAuth flow/);
      expect(collection.get!.description).toMatch(/audience-admin connection create/);
      expect(Object.keys(document.components.schemas.UpdateConnectionDto!.properties)).toEqual([
        'account_name',
        'customer_match_terms_accepted',
      ]);
      expect(Object.keys(document.components.schemas.ConnectionDto!.properties).sort()).toEqual([...FIELDS].sort());
    });

    it('answers PUT on a connection with 405 and the methods it has', async () => {
      const id = await connect(workspace);
      const response = await api.request(`${BASE}${id}/`, send('PUT', { account_name: 'x' }, auth));
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE');
      expect(((await response.json()) as { code: string }).code).toBe('method_not_allowed');
    });
  });

  describe('update', () => {
    it('renames (trimmed) and moves updated_at', async () => {
      const id = await connect(workspace, { accountName: 'Before' });
      const before = (await (await get(`${BASE}${id}/`)).json()) as ConnectionBody;
      const response = await patch(id, { account_name: '  After  ' });
      expect(response.status).toBe(200);
      const after = (await response.json()) as ConnectionBody;
      expect(after).toEqual({ ...before, account_name: 'After', updated_at: expect.stringMatching(ISO) });
      expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
      expect(await (await get(`${BASE}${id}/`)).json()).toEqual(after);
    });

    it('accepts 255 characters', async () => {
      const id = await connect(workspace);
      const response = await patch(id, { account_name: 'n'.repeat(255) });
      expect(response.status).toBe(200);
      expect(((await response.json()) as ConnectionBody).account_name).toHaveLength(255);
    });

    it('ignores every read-only field in the body', async () => {
      const id = await connect(workspace, { accountName: 'Original', accessToken: secret('ya29') });
      const before = (await (await get(`${BASE}${id}/`)).json()) as ConnectionBody;
      const response = await patch(id, {
        id: 999999,
        customer: 424242,
        platform: 'meta_ads',
        external_account_id: 'hijacked',
        status: 'revoked',
        scopes: ['everything'],
        connected_by: 1,
        token_expires_at: '2000-01-01T00:00:00.000Z',
        last_refreshed_at: '2000-01-01T00:00:00.000Z',
        created_at: '2000-01-01T00:00:00.000Z',
        updated_at: '2000-01-01T00:00:00.000Z',
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(before);
      expect(await (await get(`${BASE}${id}/`)).json()).toEqual(before);
    });

    it('answers an empty PATCH or the same name with 200 and changes nothing', async () => {
      const id = await connect(workspace, { accountName: 'Same' });
      const before = await (await get(`${BASE}${id}/`)).json();
      for (const body of [{}, { account_name: 'Same' }]) {
        const response = await patch(id, body);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual(before);
      }
    });

    it.each([
      ['a blank name', { account_name: '   ' }, { account_name: ['This field may not be blank.'] }],
      ['an empty name', { account_name: '' }, { account_name: ['This field may not be blank.'] }],
      ['a name too long', { account_name: 'x'.repeat(256) }, { account_name: ['Ensure this field has no more than 255 characters.'] }],
      ['a name of the wrong type', { account_name: 42 }, { account_name: ['Not a valid string.'] }],
      ['a null name', { account_name: null }, { account_name: ['This field may not be null.'] }],
      ['an unknown field', { account_name: 'ok', colour: 'blue' }, { colour: ['Unknown field.'] }],
      ['a token in the body', { access_token: 'x' }, { access_token: ['Unknown field.'] }],
    ])('rejects %s with 400 and changes nothing', async (_case, body, errors) => {
      const id = await connect(workspace, { accountName: 'Untouched' });
      expect(await errorsOf(await patch(id, body))).toEqual(errors);
      expect((await rowOf(id))!.account_name).toBe('Untouched');
    });

    it('answers a malformed JSON body with 400 parse_error and a form body with 415', async () => {
      const id = await connect(workspace);
      const malformed = await api.request(`${BASE}${id}/`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"account_name":',
      });
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as { code: string }).code).toBe('parse_error');
      const form = await api.request(`${BASE}${id}/`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'account_name=x',
      });
      expect(form.status).toBe(415);
    });

    it('answers a connection that does not exist with 404', async () => {
      expect((await patch(987654, { account_name: 'x' })).status).toBe(404);
    });
  });

  describe('delete', () => {
    it('answers 204 with no body, then 404', async () => {
      const id = await connect(workspace);
      const response = await remove(id);
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect((await get(`${BASE}${id}/`)).status).toBe(404);
      expect((await remove(id)).status).toBe(404);
      expect(await rowOf(id)).toBeUndefined();
    });

    it('revokes a Google grant with its decrypted refresh token', async () => {
      const refresh = secret('1//refresh');
      const id = await connect(workspace, { platform: 'google_ads', accessToken: secret('ya29'), refreshToken: refresh });
      expect((await remove(id)).status).toBe(204);
      expect(provider.requests).toHaveLength(1);
      const [request] = provider.requests;
      expect(request).toMatchObject({ method: 'POST', path: '/revoke', contentType: 'application/x-www-form-urlencoded' });
      expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({ token: refresh });
    });

    it('revokes a Google grant with its access token when there is no refresh token', async () => {
      const access = secret('ya29');
      const id = await connect(workspace, { platform: 'google_ads', accessToken: access });
      expect((await remove(id)).status).toBe(204);
      expect(provider.requests.map((request) => new URLSearchParams(request.body).get('token'))).toEqual([access]);
    });

    it('revokes a Meta grant with DELETE /me/permissions and its decrypted access token', async () => {
      const access = secret('EAAB');
      const id = await connect(workspace, { platform: 'meta_ads', accessToken: access });
      expect((await remove(id)).status).toBe(204);
      expect(provider.requests).toHaveLength(1);
      const [request] = provider.requests;
      expect(request).toMatchObject({ method: 'DELETE', path: '/v19.0/me/permissions', body: '' });
      expect(Object.fromEntries(request!.query)).toEqual({ access_token: access });
    });

    it('calls no provider for a connection without a stored token', async () => {
      const id = await connect(workspace, { platform: 'meta_ads' });
      expect((await remove(id)).status).toBe(204);
      expect(provider.requests).toEqual([]);
      expect(await rowOf(id)).toBeUndefined();
    });

    it('still deletes when the provider answers 500', async () => {
      provider.mode = 'error';
      const id = await connect(workspace, { platform: 'meta_ads', accessToken: secret('EAAB') });
      expect((await remove(id)).status).toBe(204);
      expect(provider.requests).toHaveLength(1);
      expect(await rowOf(id)).toBeUndefined();
    });

    it('still deletes when the provider does not answer within PROVIDER_TIMEOUT_MS', async () => {
      provider.mode = 'hang';
      const id = await connect(workspace, { platform: 'google_ads', refreshToken: secret('1//refresh') });
      const started = Date.now();
      expect((await remove(id)).status).toBe(204);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(10_000);
      expect(provider.requests).toHaveLength(1);
      expect(await rowOf(id)).toBeUndefined();
    });

    it('clears the connection of its signals and pauses the active ones, in that workspace only', async () => {
      const id = await connect(workspace);
      const other = await connect(workspace);
      const insert = async (name: string, status: number, connectionId: number | null) => {
        const rows: { id: number }[] = await api.dataSource.query(
          `INSERT INTO signals (customer_id, name, signal_type, status, connection_id) VALUES ($1, $2, 'conversion', $3, $4) RETURNING id`,
          [workspace.customerId, name, status, connectionId],
        );
        return rows[0]!.id;
      };
      const signals = {
        active: await insert('active', 1, id),
        draft: await insert('draft', 0, id),
        paused: await insert('paused', 2, id),
        failed: await insert('failed', 3, id),
        archived: await insert('archived', 4, id),
        elsewhere: await insert('other connection', 1, other),
      };
      expect((await remove(id)).status).toBe(204);
      const rows: { id: number; status: number; connection_id: number | null }[] = await api.dataSource.query(
        'SELECT id, status, connection_id FROM signals WHERE id = ANY($1) ORDER BY id',
        [Object.values(signals)],
      );
      const byId = new Map(rows.map((row) => [row.id, { status: row.status, connection: row.connection_id }]));
      expect(byId.get(signals.active)).toEqual({ status: 2, connection: null });
      expect(byId.get(signals.draft)).toEqual({ status: 0, connection: null });
      expect(byId.get(signals.paused)).toEqual({ status: 2, connection: null });
      expect(byId.get(signals.failed)).toEqual({ status: 3, connection: null });
      expect(byId.get(signals.archived)).toEqual({ status: 4, connection: null });
      expect(byId.get(signals.elsewhere)).toEqual({ status: 1, connection: other });
    });

    it('removes the connection from the audiences that sent to it', async () => {
      const [gone, kept] = [await connect(workspace), await connect(workspace)];
      const created = await api.request(
        '/api/v1/audiences/',
        send('POST', { name: `Audience ${randomBytes(4).toString('hex')}`, source_type: 'rules', connections: [gone, kept] }, auth),
      );
      expect(created.status).toBe(201);
      const audience = (await created.json()) as { id: number };
      expect((await remove(gone)).status).toBe(204);
      const links: { connection_id: number }[] = await api.dataSource.query(
        'SELECT connection_id FROM audience_connections WHERE audience_id = $1',
        [audience.id],
      );
      expect(links.map((link) => link.connection_id)).toEqual([kept]);
      expect(((await (await get(`/api/v1/audiences/${audience.id}/`)).json()) as { connections: number[] }).connections).toEqual([kept]);
    });
  });

  describe('list', () => {
    let listWorkspace: Workspace;
    let listAuth: Record<string, string>;
    const ids: number[] = [];
    const statuses: ConnectionStatus[] = ['active', 'expired', 'revoked', 'error'];

    beforeAll(async () => {
      listWorkspace = await createWorkspace(api);
      listAuth = bearer((await login(api, await createUser(api, listWorkspace, { role: 'viewer' }))).access);
      for (let index = 0; index < 25; index++) {
        ids.push(
          await connect(listWorkspace, {
            platform: index % 3 === 0 ? 'meta_ads' : 'google_ads',
            status: statuses[index % 4],
            // Names in another order than ids, so ordering by name is really tested.
            accountName: `List ${String((index * 7) % 25).padStart(2, '0')}`,
          }),
        );
      }
      // Touch two older rows, so updated_at orders differently from id too.
      const admin = bearer((await login(api, await createUser(api, listWorkspace, { role: 'admin' }))).access);
      for (const id of [ids[3]!, ids[10]!]) expect((await patch(id, { account_name: `List renamed ${id}` }, admin)).status).toBe(200);
    });

    const list = async (query: string) => {
      const response = await api.request(`${BASE}${query}`, { headers: listAuth });
      return {
        status: response.status,
        body: (await response.json()) as {
          count: number;
          next: string | null;
          previous: string | null;
          results: ConnectionBody[];
          detail?: string;
          errors?: Record<string, string[]>;
        },
      };
    };

    it('pages newest first with absolute next/previous links', async () => {
      const first = await list('');
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(25);
      expect(first.body.results.map((row) => row.id)).toEqual([...ids].reverse().slice(0, 20));
      expect(first.body.previous).toBeNull();
      expect(first.body.next).toBe(`${api.baseUrl}${BASE}?page=2`);
      const second = await list('?page=2');
      expect(second.body.results.map((row) => row.id)).toEqual([...ids].reverse().slice(20));
      expect(second.body.next).toBeNull();
      expect(second.body.previous).toBe(`${api.baseUrl}${BASE}?page=1`);
    });

    it('keeps the other query parameters in the links', async () => {
      const { body } = await list('?platform=google_ads&page_size=5');
      expect(body.count).toBe(16);
      expect(Object.fromEntries(new URL(body.next!).searchParams)).toEqual({ platform: 'google_ads', page_size: '5', page: '2' });
    });

    it('clamps page_size above 100', async () => {
      const { body } = await list('?page_size=101');
      expect(body.results).toHaveLength(25);
      expect(body.next).toBeNull();
    });

    it('filters by platform, status, both, and customer', async () => {
      expect((await list('?platform=meta_ads')).body.count).toBe(9);
      expect((await list('?platform=google_ads')).body.count).toBe(16);
      expect((await list('?status=active')).body.count).toBe(7);
      expect((await list('?status=error')).body.count).toBe(6);
      const both = (await list('?platform=meta_ads&status=active')).body;
      expect(both.count).toBe(3);
      expect(both.results.every((row) => row.platform === 'meta_ads' && row.status === 'active')).toBe(true);
      expect((await list(`?customer=${listWorkspace.customerId}`)).body.count).toBe(25);
      expect((await list(`?customer=${workspace.customerId}`)).body).toMatchObject({ count: 0, results: [] });
    });

    it('searches account names, ignoring letter case and taking LIKE wildcards literally', async () => {
      const renamed = (await list('?search=RENAMED')).body;
      expect(renamed.results.map((row) => row.id).sort((a, b) => a - b)).toEqual([ids[3]!, ids[10]!]);
      const tens = (await list('?search=list 0&page_size=100')).body;
      expect(tens.results.map((row) => row.account_name).sort()).toEqual(
        ['00', '01', '02', '03', '04', '05', '06', '07', '08', '09'].map((n) => `List ${n}`),
      );
      expect((await list('?search=%25')).body.count).toBe(0);
      expect((await list('?search=_')).body.count).toBe(0);
      // With another filter: of the two renamed, only the fourth (index 3) is on Meta.
      expect((await list('?search=renamed&platform=meta_ads')).body.results.map((row) => row.id)).toEqual([ids[3]!]);
    });

    it.each([
      [`?search=${'x'.repeat(256)}`, 400, 'search'],
      ['?platform=tiktok_ads', 400, 'platform'],
      ['?status=paused', 400, 'status'],
      ['?customer=abc', 400, 'customer'],
      ['?ordering=secret', 400, 'ordering'],
      ['?ordering=account_name', 400, 'ordering'],
      ['?page_size=0', 400, 'page_size'],
      ['?page=3', 404, undefined],
      ['?page=0', 404, undefined],
      ['?page=abc', 404, undefined],
    ])('answers %s with %i', async (query, status, field) => {
      const { status: actual, body } = await list(query);
      expect(actual).toBe(status);
      if (field) expect(Object.keys(body.errors ?? {})).toEqual([field]);
      else expect(body.detail).toBe('Invalid page.');
    });

    it.each(['id', 'name', 'created_at', 'updated_at', 'status'])('orders by %s both ways', async (field) => {
      const ascending = (await list(`?ordering=${field}&page_size=100`)).body.results;
      const descending = (await list(`?ordering=-${field}&page_size=100`)).body.results;
      expect(ascending).toHaveLength(25);
      const key = (row: ConnectionBody): string | number =>
        field === 'name'
          ? row.account_name
          : field === 'status'
            ? row.status
            : field === 'created_at'
              ? row.created_at
              : field === 'updated_at'
                ? row.updated_at
                : row.id;
      const sorted = [...ascending].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id));
      expect(ascending.map((row) => row.id)).toEqual(sorted.map((row) => row.id));
      expect(descending.map((row) => row.id)).toEqual([...ascending].reverse().map((row) => row.id));
      // created_at follows insertion, as id does; the others must really differ from it.
      if (['name', 'updated_at', 'status'].includes(field)) expect(ascending.map((row) => row.id)).not.toEqual([...ids]);
    });
  });

  describe('Google scopes and the Customer Match terms (SPEC 10.3)', () => {
    const admin = async () => bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
    const terms = async (id: number) => (await rowOf(id))!.customer_match_terms_accepted;

    it('reports an active Google grant without datamanager as scope_missing, needing a reconnect; Meta and lost grants keep their own reasons', async () => {
      const adwordsOnly = await connect(workspace, { scopes: [ADWORDS] });
      // Registered by the CLI, or stored before the flow asked for datamanager: no record of the scope.
      const noScopes = await connect(workspace, { scopes: [] });
      const complete = await connect(workspace);
      const meta = await connect(workspace, { platform: 'meta_ads', scopes: [] });
      const lost = await connect(workspace, { scopes: [ADWORDS], status: 'expired' });
      await api.dataSource.query(`UPDATE connections SET status_reason = 'invalid_grant' WHERE id = $1`, [lost]);
      const read = async (id: number) => (await (await get(`${BASE}${id}/`)).json()) as ConnectionBody;
      for (const id of [adwordsOnly, noScopes])
        expect(await read(id)).toMatchObject({ status: 'active', status_reason: 'scope_missing', reauthorize_required: true });
      expect(await read(complete)).toMatchObject({ status: 'active', status_reason: null, reauthorize_required: false });
      expect(await read(meta)).toMatchObject({ status: 'active', status_reason: null, reauthorize_required: false });
      expect(await read(lost)).toMatchObject({ status: 'expired', status_reason: 'invalid_grant', reauthorize_required: true });
      // Nothing is stored for it: the reason follows the scopes, and `status=active` still lists the connection.
      expect((await rowOf(adwordsOnly))!.status_reason).toBeNull();
      const active = (await (await get(`${BASE}?status=active&page_size=100`)).json()) as { results: ConnectionBody[] };
      expect(active.results.map((row) => row.id)).toContain(adwordsOnly);
    });

    it('lets an admin accept and withdraw the terms on a Google connection, which starts false', async () => {
      const id = await connect(workspace);
      const headers = await admin();
      const before = (await (await get(`${BASE}${id}/`)).json()) as ConnectionBody;
      expect(before.customer_match_terms_accepted).toBe(false);
      const accepted = await patch(id, { customer_match_terms_accepted: true }, headers);
      expect(accepted.status).toBe(200);
      const body = (await accepted.json()) as ConnectionBody;
      expect(body).toEqual({ ...before, customer_match_terms_accepted: true, updated_at: expect.stringMatching(ISO) });
      expect(Date.parse(body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
      expect(await terms(id)).toBe(true);
      // Renaming and withdrawing in one PATCH.
      const withdrawn = await patch(id, { account_name: 'Renamed', customer_match_terms_accepted: false }, headers);
      expect(await withdrawn.json()).toMatchObject({ account_name: 'Renamed', customer_match_terms_accepted: false });
      expect(await terms(id)).toBe(false);
    });

    it('refuses an editor and a write key changing the terms with 403, changing nothing, but takes the value sent back unchanged', async () => {
      const id = await connect(workspace, { accountName: 'Terms guarded' });
      const writeKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'write' })).key}` };
      for (const headers of [auth, writeKey]) {
        const response = await patch(id, { account_name: 'Sneaked rename', customer_match_terms_accepted: true }, headers);
        expect(response.status).toBe(403);
        const problem = (await response.json()) as { code: string; detail: string };
        expect(problem.code).toBe('permission_denied');
        expect(problem.detail).toMatch(/^Only an admin can change a connection's Customer Match terms/);
      }
      expect(await rowOf(id)).toMatchObject({ account_name: 'Terms guarded', customer_match_terms_accepted: false });
      // A client that PATCHes back what it read is not refused for the field it did not change.
      const echoed = await patch(id, { account_name: 'Editor rename', customer_match_terms_accepted: false });
      expect(echoed.status).toBe(200);
      expect(await rowOf(id)).toMatchObject({ account_name: 'Editor rename', customer_match_terms_accepted: false });

      expect((await patch(id, { customer_match_terms_accepted: true }, await admin())).status).toBe(200);
      expect((await patch(id, { customer_match_terms_accepted: false })).status).toBe(403);
      expect((await patch(id, { customer_match_terms_accepted: true })).status).toBe(200);
      expect(await terms(id)).toBe(true);
    });

    it('refuses accepting terms on a Meta connection with 400, and the table refuses it too', async () => {
      const id = await connect(workspace, { platform: 'meta_ads' });
      const response = await patch(id, { customer_match_terms_accepted: true }, await admin());
      expect(await errorsOf(response)).toEqual({
        customer_match_terms_accepted: ["Customer Match terms are Google's; a Meta connection has none to accept."],
      });
      expect(await terms(id)).toBe(false);
      // Sent back as read (always false on Meta), it changes nothing.
      const echoed = await patch(id, { customer_match_terms_accepted: false });
      expect(echoed.status).toBe(200);
      expect(await echoed.json()).toMatchObject({ platform: 'meta_ads', customer_match_terms_accepted: false });
      await expect(api.dataSource.query(`UPDATE connections SET customer_match_terms_accepted = true WHERE id = $1`, [id])).rejects.toThrow(
        /connections_customer_match_terms_check/,
      );
    });

    it.each([
      ['a string', 'true', 'Must be a valid boolean.'],
      ['a number', 1, 'Must be a valid boolean.'],
      ['null', null, 'This field may not be null.'],
    ])('refuses %s for customer_match_terms_accepted with 400', async (_case, value, message) => {
      const id = await connect(workspace);
      expect(await errorsOf(await patch(id, { customer_match_terms_accepted: value }, await admin()))).toEqual({
        customer_match_terms_accepted: [message],
      });
      expect(await terms(id)).toBe(false);
    });
  });

  describe('tenancy', () => {
    it("answers another workspace's connection with 404 on GET, PATCH and DELETE, and leaves it alone", async () => {
      const stranger = await createWorkspace(api);
      const id = await connect(stranger, { accountName: 'Not yours', accessToken: secret('ya29'), refreshToken: secret('1//refresh') });
      const before = await rowOf(id);
      for (const response of [await get(`${BASE}${id}/`), await patch(id, { account_name: 'Mine now' }), await remove(id)]) {
        expect(response.status).toBe(404);
        expect(((await response.json()) as { code: string }).code).toBe('not_found');
      }
      expect(await rowOf(id)).toEqual(before);
      expect(provider.requests).toEqual([]);
      const listed = (await (await get(`${BASE}?page_size=100`)).json()) as { results: ConnectionBody[] };
      expect(listed.results.map((row) => row.id)).not.toContain(id);
    });
  });

  describe('permissions', () => {
    it('lets a viewer and a read-only key read but not change or delete', async () => {
      const id = await connect(workspace, { accountName: 'Guarded', refreshToken: secret('1//refresh') });
      const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
      const readKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'read' })).key}` };
      for (const headers of [viewer, readKey]) {
        expect((await get(BASE, headers)).status).toBe(200);
        expect((await get(`${BASE}${id}/`, headers)).status).toBe(200);
        for (const response of [await patch(id, { account_name: 'Changed' }, headers), await remove(id, headers)]) {
          expect(response.status).toBe(403);
          expect(((await response.json()) as { code: string }).code).toBe('permission_denied');
        }
      }
      expect((await rowOf(id))!.account_name).toBe('Guarded');
      expect(provider.requests).toEqual([]);
    });

    it('lets a write key and an admin change and delete', async () => {
      const id = await connect(workspace);
      const writeKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'write' })).key}` };
      const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
      expect((await patch(id, { account_name: 'By key' }, writeKey)).status).toBe(200);
      expect((await remove(id, admin)).status).toBe(204);
    });
  });
});
