import { runCli } from '../src/cli/commands.js';
import { ConnectionGrants } from '../src/connections/oauth/connection-grants.js';
import { ConnectionSweep } from '../src/connections/oauth/connection-sweep.js';
import { TokenCipher } from '../src/connections/token-cipher.js';
import { UsersService } from '../src/users/users.service.js';
import { startFakeGoogleAds, startFakeMetaAds, type FakeGoogleAds, type FakeMetaAds } from './support/fake-ad-platforms.js';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
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

const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const DATAMANAGER = 'https://www.googleapis.com/auth/datamanager';
const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

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
}

describe('connecting ad accounts by OAuth (SPEC section 6)', () => {
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let api: TestApp;
  let workspace: Workspace;
  let editor: { id: number; access: string; user: TestUser };

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    api = await startTestApp({
      GOOGLE_ADS_CLIENT_ID: google.clientId,
      GOOGLE_ADS_CLIENT_SECRET: google.clientSecret,
      GOOGLE_ADS_DEVELOPER_TOKEN: google.developerToken,
      GOOGLE_ADS_AUTHORIZATION_URL: `${google.url}/o/oauth2/v2/auth`,
      GOOGLE_ADS_TOKEN_URL: `${google.url}/token`,
      GOOGLE_ADS_API_URL: google.url,
      GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
      META_APP_ID: meta.appId,
      META_APP_SECRET: meta.appSecret,
      META_DIALOG_URL: `${meta.url}/v25.0/dialog/oauth`,
      META_GRAPH_URL: `${meta.url}/v25.0`,
      CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
    });
    workspace = await createWorkspace(api);
    const user = await createUser(api, workspace, { role: 'editor' });
    editor = { id: user.id, access: (await login(api, user)).access, user };
  });
  afterAll(async () => {
    await api.close();
    await google.close();
    await meta.close();
  });
  afterEach(async () => {
    api.clock.reset();
    editor.access = (await login(api, editor.user)).access;
    google.consent = [ADWORDS, DATAMANAGER];
    meta.consent = ['ads_management', 'ads_read'];
    meta.killTokens(undefined);
  });

  /** The browser's flow cookie, as the last start set it (the browser sends it back to the callback). */
  let flowCookie = '';

  async function start(slug: string, access = editor.access, body?: object): Promise<Response> {
    const response = await api.request(`/oauth/connections/${slug}/start`, send('POST', body, bearer(access)));
    const cookie = response.headers.get('set-cookie');
    if (cookie) flowCookie = cookie.split(';')[0]!;
    return response;
  }

  /** The browser's trip: to the provider, back to the callback, and the page the callback sends it to. */
  async function connect(slug: string, options: { access?: string } = {}): Promise<URL> {
    const started = await start(slug, options.access);
    expect(started.status).toBe(200);
    const { authorization_url } = (await started.json()) as { authorization_url: string };
    const atProvider = await fetch(authorization_url, { redirect: 'manual' });
    expect(atProvider.status).toBe(302);
    const callback = new URL(atProvider.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(`${api.baseUrl}/oauth/connections/${slug}/callback`);
    return followCallback(callback);
  }

  async function followCallback(callback: URL, cookie = flowCookie): Promise<URL> {
    const response = await fetch(callback, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    expect(response.status).toBe(302);
    return new URL(response.headers.get('location')!);
  }

  /** The workspace's connections, with a token fresh at the test clock's time (tests move it by days). */
  async function connections(access?: string): Promise<ConnectionBody[]> {
    access ??= (await login(api, editor.user)).access;
    const response = await api.request('/api/v1/connections/?page_size=100', { headers: bearer(access) });
    return ((await response.json()) as { results: ConnectionBody[] }).results;
  }

  /** A `requestStatus:retrieve` call to the fake Data Manager API with the connection's current access token. */
  async function dataManagerStatusWith(connectionId: number): Promise<Response> {
    const token = await inWorkspace(api, workspace.customerId, (grants) => grants.accessTokenFor(connectionId), ConnectionGrants);
    return fetch(`${google.url}/v1/requestStatus:retrieve?requestId=unknown`, { headers: { authorization: `Bearer ${token}` } });
  }

  it('connects every Google Ads account the grant reaches, in the starting user’s workspace', async () => {
    google.accounts = [
      { id: '1234567890', name: 'Acme Shoes — EU' },
      { id: '2345678901', name: 'Acme Shoes — US' },
    ];
    const landed = await connect('google-ads');
    expect(`${landed.origin}${landed.pathname}`).toBe(`${api.baseUrl}/app/connections`);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ platform: 'google_ads', connected: '2' });
    // Both scopes, with incremental authorization, offline access and a consent screen (SPEC 6 and 10.3).
    const asked = google.authorizations.at(-1)!;
    expect(asked.get('scope')!.split(' ').sort()).toEqual([ADWORDS, DATAMANAGER]);
    expect(Object.fromEntries(['include_granted_scopes', 'access_type', 'prompt'].map((name) => [name, asked.get(name)]))).toEqual({
      include_granted_scopes: 'true',
      access_type: 'offline',
      prompt: 'consent',
    });

    const listed = (await connections()).filter((connection) => connection.platform === 'google_ads');
    expect(listed.map((connection) => [connection.external_account_id, connection.account_name]).sort()).toEqual([
      ['1234567890', 'Acme Shoes — EU'],
      ['2345678901', 'Acme Shoes — US'],
    ]);
    for (const connection of listed) {
      expect(connection).toMatchObject({
        customer: workspace.customerId,
        status: 'active',
        status_reason: null,
        reauthorize_required: false,
        scopes: [ADWORDS, DATAMANAGER],
        customer_match_terms_accepted: false,
        connected_by: editor.id,
      });
      const lifetime = new Date(connection.token_expires_at!).getTime() - Date.now();
      expect(lifetime).toBeGreaterThan(50 * 60 * 1000);
      expect(lifetime).toBeLessThan(HOUR_MS);
    }
    // Another workspace sees none of them.
    const other = await createUser(api, await createWorkspace(api));
    expect(await connections((await login(api, other)).access)).toEqual([]);
  });

  it('refreshes the same connection in place when the account is connected again, keeping its id and the name given to it', async () => {
    google.accounts = [{ id: '3456789012', name: 'Reconnect Co' }];
    await connect('google-ads');
    const [first] = (await connections()).filter((connection) => connection.external_account_id === '3456789012');
    await api.request(`/api/v1/connections/${first!.id}/`, send('PATCH', { account_name: 'Our main account' }, bearer(editor.access)));

    const landed = await connect('google-ads');
    expect(landed.searchParams.get('connected')).toBe('1');
    const again = (await connections()).filter((connection) => connection.external_account_id === '3456789012');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ id: first!.id, account_name: 'Our main account', status: 'active' });
  });

  it('connects a grant without datamanager as scope_missing, and a reconnect with both scopes fixes the same connection', async () => {
    google.accounts = [{ id: '5656565656', name: 'Half Granted Co' }];
    google.consent = [ADWORDS];
    const landed = await connect('google-ads');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ platform: 'google_ads', connected: '1' });
    const [narrow] = (await connections()).filter((connection) => connection.external_account_id === '5656565656');
    expect(narrow).toMatchObject({
      status: 'active',
      status_reason: 'scope_missing',
      reauthorize_required: true,
      scopes: [ADWORDS],
    });
    // Its token is refused by the Data Manager API, as Google refuses a token without the scope.
    expect((await dataManagerStatusWith(narrow!.id)).status).toBe(403);
    // An admin accepted the terms meanwhile: a reconnect must not lose that.
    const admin = await createUser(api, workspace, { role: 'admin' });
    const adminAccess = (await login(api, admin)).access;
    const accepted = await api.request(
      `/api/v1/connections/${narrow!.id}/`,
      send('PATCH', { customer_match_terms_accepted: true }, bearer(adminAccess)),
    );
    expect(accepted.status).toBe(200);

    google.consent = [ADWORDS, DATAMANAGER];
    expect((await connect('google-ads')).searchParams.get('connected')).toBe('1');
    const again = (await connections()).filter((connection) => connection.external_account_id === '5656565656');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({
      id: narrow!.id,
      status: 'active',
      status_reason: null,
      reauthorize_required: false,
      scopes: [ADWORDS, DATAMANAGER],
      customer_match_terms_accepted: true,
    });
    // The token it now holds gets past the Data Manager API's scope check (to its answer about an unknown request).
    expect((await dataManagerStatusWith(narrow!.id)).status).not.toBe(403);
  });

  it('reports a refused consent, a narrowed scope and a refused code on the redirect, writing nothing', async () => {
    google.accounts = [{ id: '4567890123', name: 'Never Connected' }];
    google.consent = 'deny';
    expect(Object.fromEntries(await connect('google-ads').then((url) => url.searchParams))).toEqual({
      platform: 'google_ads',
      error: 'access_denied',
    });

    google.consent = ['openid', 'email'];
    expect((await connect('google-ads')).searchParams.get('error')).toBe('scope_missing');

    // Data Manager alone is no Google Ads connection: the accounts cannot even be listed.
    google.consent = [DATAMANAGER];
    expect((await connect('google-ads')).searchParams.get('error')).toBe('scope_missing');

    google.consent = [ADWORDS, DATAMANAGER];
    const started = (await (await start('google-ads')).json()) as { authorization_url: string };
    const state = new URL(started.authorization_url).searchParams.get('state')!;
    const refused = await followCallback(
      new URL(`${api.baseUrl}/oauth/connections/google-ads/callback?code=4%2F0Anot-a-code&state=${state}`),
    );
    expect(refused.searchParams.get('error')).toBe('invalid_code');

    expect((await connections()).some((connection) => connection.external_account_id === '4567890123')).toBe(false);
  });

  it('spends the state once, expires it after 10 minutes, and refuses one made for the other platform', async () => {
    google.accounts = [{ id: '5678901234', name: 'State Co' }];
    const started = (await (await start('google-ads')).json()) as { authorization_url: string };
    const callback = new URL((await fetch(started.authorization_url, { redirect: 'manual' })).headers.get('location')!);
    expect((await followCallback(callback)).searchParams.get('connected')).toBe('1');
    const replayed = await followCallback(callback);
    expect(Object.fromEntries(replayed.searchParams)).toEqual({ platform: 'google_ads', error: 'invalid_state' });

    const late = (await (await start('google-ads')).json()) as { authorization_url: string };
    const lateCallback = new URL((await fetch(late.authorization_url, { redirect: 'manual' })).headers.get('location')!);
    api.clock.advance(10 * 60 * 1000 + 1000);
    expect((await followCallback(lateCallback)).searchParams.get('error')).toBe('expired_state');
    api.clock.reset();

    const googleState = (await (await start('google-ads')).json()) as { authorization_url: string };
    const state = new URL(googleState.authorization_url).searchParams.get('state')!;
    const crossed = await followCallback(new URL(`${api.baseUrl}/oauth/connections/meta-ads/callback?code=x&state=${state}`));
    expect(crossed.searchParams.get('error')).toBe('invalid_state');
    expect((await followCallback(new URL(`${api.baseUrl}/oauth/connections/google-ads/callback`))).searchParams.get('error')).toBe(
      'invalid_state',
    );
  });

  it('finishes a flow only in the browser that started it', async () => {
    google.accounts = [{ id: '1212121212', name: 'Phished Co' }];
    const started = await start('google-ads');
    expect(started.headers.get('set-cookie')).toMatch(
      /^connection_flow=[\w-]{43}; Path=\/oauth\/connections\/; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    // The cookie is part of the contract: generated clients and Swagger UI see it.
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    expect(Object.keys(document.paths['/oauth/connections/{platform}/start']!.post!.responses['200']!.headers ?? {})).toContain(
      'Set-Cookie',
    );
    const { authorization_url } = (await started.json()) as { authorization_url: string };
    const callback = new URL((await fetch(authorization_url, { redirect: 'manual' })).headers.get('location')!);
    // Someone else's browser (the link was forwarded to them) has no cookie, or another one.
    expect((await followCallback(callback, '')).searchParams.get('error')).toBe('browser_mismatch');
    expect((await connections()).some((connection) => connection.external_account_id === '1212121212')).toBe(false);
  });

  it('keeps a connection active when the refresh fails for a reason other than the grant (a rotated client secret)', async () => {
    google.accounts = [{ id: '3434343434', name: 'Misconfigured Co' }];
    await connect('google-ads');
    const secret = google.clientSecret;
    google.clientSecret = 'rotated-at-google';
    try {
      api.clock.advance(DAY_MS + HOUR_MS);
      const counts = await api.app.get(ConnectionSweep).sweep();
      expect(counts.failed).toBeGreaterThanOrEqual(1);
      expect(counts.lost).toBe(0);
    } finally {
      google.clientSecret = secret;
    }
    const [connection] = (await connections()).filter((candidate) => candidate.external_account_id === '3434343434');
    expect(connection).toMatchObject({ status: 'active', status_reason: null });
  });

  it('lets only admins and editors with a JWT start, and refuses return pages outside the web interface', async () => {
    const viewer = await createUser(api, workspace, { role: 'viewer' });
    const viewerStart = await start('google-ads', (await login(api, viewer)).access);
    expect(viewerStart.status).toBe(403);
    const { key } = await createApiKey(api, workspace, { scope: 'write' });
    expect((await api.request('/oauth/connections/google-ads/start', send('POST', undefined, apiKeyHeader(key)))).status).toBe(403);
    expect((await api.request('/oauth/connections/google-ads/start', { method: 'POST' })).status).toBe(401);
    expect((await start('tiktok-ads')).status).toBe(404);
    expect((await api.request('/oauth/connections/tiktok-ads/callback?state=x')).status).toBe(404);
    for (const returnTo of [
      'https://evil.example/app',
      '//evil.example/app',
      '/app/../admin',
      '/app/%2e%2e/admin',
      '/api/v1/audiences/',
      '/app\\evil',
    ]) {
      const response = await start('google-ads', editor.access, { return_to: returnTo });
      expect({ returnTo, status: response.status }).toEqual({ returnTo, status: 400 });
    }
    const custom = await start('google-ads', editor.access, { return_to: '/app/settings/connections' });
    expect(custom.status).toBe(200);
  });

  it('refreshes a Google access token just before use, and keeps the refresh token', async () => {
    google.accounts = [{ id: '6789012345', name: 'Refresh Co' }];
    await connect('google-ads');
    const [connection] = (await connections()).filter((candidate) => candidate.external_account_id === '6789012345');
    const grants = api.app.get(ConnectionGrants);
    const before = google.refreshes;
    const token = await inWorkspace(api, workspace.customerId, (service) => service.accessTokenFor(connection!.id), ConnectionGrants);
    expect(google.refreshes).toBe(before);

    api.clock.advance(59.5 * 60 * 1000);
    const fresh = await inWorkspace(api, workspace.customerId, () => grants.accessTokenFor(connection!.id), ConnectionGrants);
    expect(google.refreshes).toBe(before + 1);
    expect(fresh).not.toBe(token);
    const [after] = (await connections()).filter((candidate) => candidate.id === connection!.id);
    expect(new Date(after!.token_expires_at!).getTime()).toBeGreaterThan(new Date(connection!.token_expires_at!).getTime());
    expect(new Date(after!.last_refreshed_at!).getTime()).toBeGreaterThan(new Date(connection!.last_refreshed_at!).getTime());
  });

  it('turns a connection whose grant was revoked at Google expired, pausing its active signals, and a reconnect brings it back', async () => {
    google.accounts = [{ id: '7890123456', name: 'Revoked Co' }];
    const issuedBefore = google.issued.length;
    await connect('google-ads');
    const refreshToken = google.issued.slice(issuedBefore).find((value) => value.startsWith('1//'))!;
    const [connection] = (await connections()).filter((candidate) => candidate.external_account_id === '7890123456');
    const created = await api.request(
      '/api/v1/signals/',
      json(
        { name: 'Purchases', signal_type: 'conversion', connection: connection!.id, config: { conversion_action_id: '123456789' } },
        bearer(editor.access),
      ),
    );
    const signal = (await created.json()) as { id: number };
    expect((await api.request(`/api/v1/signals/${signal.id}/`, send('PATCH', { status: 1 }, bearer(editor.access)))).status).toBe(200);

    // An admin's endpoint hears of it (SPEC 10.5); this app runs no workers, so the delivery waits in its row.
    const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
    const hook = await api.request(
      '/api/v1/webhooks/',
      json({ url: 'http://127.0.0.1:9/hook', events: ['connection.reauthorization_required'] }, admin),
    );
    const webhook = ((await hook.json()) as { id: number }).id;

    google.revoked.add(refreshToken);
    api.clock.advance(DAY_MS + HOUR_MS);
    const counts = await api.app.get(ConnectionSweep).sweep();
    expect(counts.lost).toBeGreaterThanOrEqual(1);
    const bodies: { body: string }[] = await api.dataSource.query('SELECT body FROM webhook_deliveries WHERE webhook_id = $1', [webhook]);
    expect(bodies.map((row) => JSON.parse(row.body) as { type: string; data: { id: number; status: string } })).toContainEqual(
      expect.objectContaining({
        type: 'connection.reauthorization_required',
        data: expect.objectContaining({ id: connection!.id, status: 'expired', reauthorize_required: true }),
      }),
    );

    const [lost] = (await connections()).filter((candidate) => candidate.id === connection!.id);
    expect(lost).toMatchObject({ status: 'expired', status_reason: 'invalid_grant', reauthorize_required: true });
    const reader = (await login(api, editor.user)).access;
    const paused = (await (await api.request(`/api/v1/signals/${signal.id}/`, { headers: bearer(reader) })).json()) as {
      status: number;
      connection: number;
    };
    expect(paused).toMatchObject({ status: 2, connection: connection!.id });

    api.clock.reset();
    editor.access = (await login(api, editor.user)).access;
    await connect('google-ads');
    const [back] = (await connections()).filter((candidate) => candidate.external_account_id === '7890123456');
    expect(back).toMatchObject({ id: connection!.id, status: 'active', status_reason: null, reauthorize_required: false });
  });

  it('connects Meta Ads accounts with a long-lived token, renews it before it expires, and marks a revoked grant', async () => {
    meta.accounts = [
      { account_id: '111222333', name: 'Acme on Meta' },
      { account_id: '444555666', name: 'Acme Retargeting' },
    ];
    const landed = await connect('meta-ads');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ platform: 'meta_ads', connected: '2' });
    const listed = (await connections()).filter((connection) => connection.platform === 'meta_ads');
    expect(listed).toHaveLength(2);
    for (const connection of listed) {
      expect(connection.scopes.sort()).toEqual(['ads_management', 'ads_read']);
      // The short-lived token was exchanged: about 60 days.
      expect(new Date(connection.token_expires_at!).getTime() - Date.now()).toBeGreaterThan(59 * DAY_MS);
    }

    const exchanges = meta.exchanges;
    api.clock.advance(55 * DAY_MS);
    const renewed = await api.app.get(ConnectionSweep).sweep();
    expect(renewed.refreshed).toBeGreaterThanOrEqual(2);
    expect(meta.exchanges).toBeGreaterThanOrEqual(exchanges + 2);
    for (const connection of (await connections()).filter((candidate) => candidate.platform === 'meta_ads')) {
      expect(new Date(connection.token_expires_at!).getTime() - api.clock.nowMs()).toBeGreaterThan(59 * DAY_MS);
    }

    meta.killTokens(460);
    api.clock.advance(55 * DAY_MS);
    await api.app.get(ConnectionSweep).sweep();
    for (const connection of (await connections()).filter((candidate) => candidate.platform === 'meta_ads')) {
      expect(connection).toMatchObject({ status: 'revoked', status_reason: 'access_revoked', reauthorize_required: true });
    }
  });

  it('reports a refused Meta consent and a grant without ads_management', async () => {
    meta.accounts = [{ account_id: '777888999', name: 'Not Connected' }];
    meta.consent = 'deny';
    expect((await connect('meta-ads')).searchParams.get('error')).toBe('access_denied');
    meta.consent = ['ads_read'];
    expect((await connect('meta-ads')).searchParams.get('error')).toBe('scope_missing');
    expect((await connections()).some((connection) => connection.external_account_id === '777888999')).toBe(false);
  });

  it('revokes the grant at Google when a connection is deleted', async () => {
    google.accounts = [{ id: '8901234567', name: 'Delete Co' }];
    const issuedBefore = google.issued.length;
    await connect('google-ads');
    const refreshToken = google.issued.slice(issuedBefore).find((value) => value.startsWith('1//'))!;
    const [connection] = (await connections()).filter((candidate) => candidate.external_account_id === '8901234567');
    expect((await api.request(`/api/v1/connections/${connection!.id}/`, send('DELETE', undefined, bearer(editor.access)))).status).toBe(
      204,
    );
    expect(google.revocations).toContain(refreshToken);
  });

  it('keeps no token in plaintext anywhere in the database, and re-encrypts every token under a new key', async () => {
    const tables: { table_name: string }[] = await api.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    let dump = '';
    for (const { table_name } of tables) {
      const rows: { row: string }[] = await api.dataSource.query(`SELECT t::text AS row FROM "${table_name}" t`);
      dump += rows.map((row) => row.row).join('\n');
    }
    const issued = [...google.issued, ...meta.issued];
    expect(issued.length).toBeGreaterThan(10);
    for (const value of issued) {
      expect(dump.includes(value)).toBe(false);
      expect(dump.includes(Buffer.from(value).toString('hex'))).toBe(false);
    }

    // Key rotation: the old key becomes a previous key, and the CLI moves every token to the new one.
    const newKey = Buffer.alloc(32, 9).toString('base64');
    let stdout = '';
    const code = await runCli(
      ['connection', 'reencrypt'],
      { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: () => undefined } },
      { ...TEST_ENV, DATABASE_URL: api.databaseUrl, ENCRYPTION_KEY: newKey, ENCRYPTION_PREVIOUS_KEYS: TEST_ENV.ENCRYPTION_KEY },
    );
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { reencrypted: number; current: number; undecryptable: unknown[] };
    expect(report.reencrypted).toBeGreaterThan(0);
    expect(report.undecryptable).toEqual([]);
    const newCipher = new TokenCipher(Buffer.from(newKey, 'base64'));
    const stored: { access_token_encrypted: Buffer | null }[] = await api.dataSource.query(
      `SELECT access_token_encrypted FROM connections WHERE access_token_encrypted IS NOT NULL`,
    );
    for (const row of stored) expect(newCipher.isCurrent(row.access_token_encrypted!)).toBe(true);
    const again = JSON.parse(
      await (async () => {
        let out = '';
        await runCli(
          ['connection', 'reencrypt'],
          { stdout: { write: (chunk: string) => (out += chunk) }, stderr: { write: () => undefined } },
          { ...TEST_ENV, DATABASE_URL: api.databaseUrl, ENCRYPTION_KEY: newKey },
        );
        return out;
      })(),
    ) as { reencrypted: number };
    expect(again.reencrypted).toBe(0);
  });

  it('connects nothing for a user demoted to viewer between start and callback', async () => {
    const user = await createUser(api, workspace, { role: 'editor' });
    const access = (await login(api, user)).access;
    google.accounts = [{ id: '9012345678', name: 'Demoted Co' }];
    const started = (await (await start('google-ads', access)).json()) as { authorization_url: string };
    const callback = new URL((await fetch(started.authorization_url, { redirect: 'manual' })).headers.get('location')!);
    await api.app.get(UsersService).deactivate(user.email);
    expect((await followCallback(callback)).searchParams.get('error')).toBe('permission_denied');
  });
});
