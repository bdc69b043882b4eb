import { randomBytes } from 'node:crypto';
import { UsersService } from '../src/users/users.service.js';
import { authorizeInBrowser } from './support/browser.js';
import { startFakeFacebook, type FakeFacebook } from './support/facebook-graph.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, send, type TestUser } from './support/factories.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const GOOGLE_REDIRECT = 'http://localhost:5173/auth/callback/google';
const OTHER_REDIRECT = 'http://localhost:5173/auth/callback/other';
const FACEBOOK_REDIRECT = 'http://localhost:5173/auth/callback/facebook';

interface Problem {
  code: string;
  detail: string;
  errors?: Record<string, string[]>;
}
interface LoginResult {
  access: string;
  refresh: string;
  user: { id: number; email: string };
}

const unique = () => randomBytes(4).toString('hex');

function providerEnv(google: TestOidcProvider | undefined, facebook: FakeFacebook | undefined): Record<string, string> {
  return {
    SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: [GOOGLE_REDIRECT, OTHER_REDIRECT, FACEBOOK_REDIRECT].join(','),
    ...(google && {
      GOOGLE_OAUTH2_CLIENT_ID: google.clientId,
      GOOGLE_OAUTH2_CLIENT_SECRET: google.clientSecret,
      GOOGLE_OIDC_ISSUER: google.issuer,
    }),
    ...(facebook && {
      FACEBOOK_APP_ID: facebook.appId,
      FACEBOOK_APP_SECRET: facebook.appSecret,
      FACEBOOK_DIALOG_URL: facebook.url,
      FACEBOOK_GRAPH_URL: facebook.url,
    }),
  };
}

/** GET the authorization URL, as a client does before sending the browser there. */
async function startLogin(api: TestApp, provider: string, redirectUri: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await api.request(`/api/v1/auth/o/${provider}/?redirect_uri=${encodeURIComponent(redirectUri)}`, { headers });
  expect(response.status).toBe(200);
  return ((await response.json()) as { authorization_url: string }).authorization_url;
}

describe('social login with Google (OpenID Connect against a real provider)', () => {
  let google: TestOidcProvider;
  let api: TestApp;
  beforeAll(async () => {
    google = await startOidcProvider([GOOGLE_REDIRECT, OTHER_REDIRECT]);
    api = await startTestApp(providerEnv(google, undefined));
  });
  afterAll(async () => {
    await api.close();
    await google.close();
  });
  afterEach(() => {
    google.tamper = undefined;
    api.clock.reset();
  });

  /** A Google account, signed in at the provider, and the callback URL the browser comes back with. */
  async function googleCallback(email: string, options: { verified?: boolean; redirectUri?: string; linkWith?: string } = {}) {
    const account = `google-${unique()}`;
    google.accounts.set(account, { email, email_verified: options.verified ?? true });
    const redirectUri = options.redirectUri ?? GOOGLE_REDIRECT;
    const headers = options.linkWith ? bearer(options.linkWith) : {};
    const callback = await authorizeInBrowser(await startLogin(api, 'google-oauth2', redirectUri, headers), redirectUri, {
      login: account,
    });
    return { account, callback, code: callback.searchParams.get('code')!, state: callback.searchParams.get('state')! };
  }

  const finish = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    api.request('/api/v1/auth/o/google-oauth2/', json(body, headers));

  it('signs in an active user by verified email, links the account, and issues an ordinary session', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace, { email: `Ana.${unique()}@Example.com` });
    const { account, callback, code, state } = await googleCallback(user.email.toLowerCase());
    // The provider says who it is (RFC 9207) and the authorization request carried PKCE S256 and a nonce.
    expect(callback.searchParams.get('iss')).toBe(google.issuer);

    const response = await finish({ code, state });
    expect(response.status).toBe(201);
    const result = (await response.json()) as LoginResult;
    expect(result.user).toEqual({ id: user.id, email: user.email });
    const me = await api.request('/api/v1/users/me/', { headers: bearer(result.access) });
    expect(((await me.json()) as { id: number; customer: number }).customer).toBe(workspace.customerId);

    // Refresh rotation and logout work as for a password login.
    const refreshed = await api.request('/api/v1/jwt/refresh/', json({ refresh: result.refresh }));
    expect(refreshed.status).toBe(200);
    const pair = (await refreshed.json()) as { access: string; refresh: string };
    expect((await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(pair.access) })).status).toBe(204);
    expect((await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.refresh }))).status).toBe(401);

    // Later logins match the link by subject, whatever the account's email has become.
    google.accounts.set(account, { email: `renamed-${unique()}@example.com`, email_verified: false });
    const again = await authorizeInBrowser(await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT), GOOGLE_REDIRECT, { login: account });
    const second = await finish({ code: again.searchParams.get('code')!, state: again.searchParams.get('state')! });
    expect(second.status).toBe(201);
    expect(((await second.json()) as LoginResult).user.id).toBe(user.id);
  });

  it('takes the callback as djoser clients send it: query string on the POST, with or without iss, or a form body', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const withIss = await googleCallback(user.email);
    const query = new URLSearchParams({
      code: withIss.code,
      state: withIss.state,
      iss: withIss.callback.searchParams.get('iss')!,
      scope: 'openid email',
      authuser: '0',
    });
    const byQuery = await api.request(`/api/v1/auth/o/google-oauth2/?${query}`, { method: 'POST' });
    expect(byQuery.status).toBe(201);

    const withoutIss = await googleCallback(user.email);
    const byQueryNoIss = await api.request(
      `/api/v1/auth/o/google-oauth2?code=${encodeURIComponent(withoutIss.code)}&state=${withoutIss.state}`,
      {
        method: 'POST',
      },
    );
    expect(byQueryNoIss.status).toBe(201);

    const form = await googleCallback(user.email);
    const byForm = await api.request('/api/v1/auth/o/google-oauth2/', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code: form.code, state: form.state }).toString(),
    });
    expect(byForm.status).toBe(201);
    expect(((await byForm.json()) as LoginResult).user.id).toBe(user.id);

    // Form bodies are for this endpoint only.
    const elsewhere = await api.request('/api/v1/jwt/create/', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
    });
    expect(elsewhere.status).toBe(415);
  });

  it('refuses an iss that is not the provider’s', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const { code, state } = await googleCallback(user.email);
    const response = await finish({ code, state, iss: 'https://accounts.evil.example' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Problem).errors).toHaveProperty('iss');
  });

  it('answers 401 for an unverified email, an unknown email and a deactivated user, and creates nobody', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const unverified = await googleCallback(user.email, { verified: false });
    const first = await finish({ code: unverified.code, state: unverified.state });
    expect(first.status).toBe(401);
    expect(await first.json()).toMatchObject({ code: 'authentication_failed', detail: expect.stringContaining('verified') });

    const unknownEmail = `nobody-${unique()}@example.com`;
    const unknown = await googleCallback(unknownEmail);
    const second = await finish({ code: unknown.code, state: unknown.state });
    expect(second.status).toBe(401);
    const unknownProblem = (await second.json()) as Problem;
    expect(unknownProblem.code).toBe('authentication_failed');
    expect(await api.app.get(UsersService).findByEmail(unknownEmail)).toBeNull();

    const inactive = await createUser(api, await createWorkspace(api));
    await api.app.get(UsersService).deactivate(inactive.email);
    const deactivated = await googleCallback(inactive.email);
    const third = await finish({ code: deactivated.code, state: deactivated.state });
    expect(third.status).toBe(401);
    // The same answer as for an unknown email.
    const { code, detail } = (await third.json()) as Problem;
    expect({ code, detail }).toEqual({ code: unknownProblem.code, detail: unknownProblem.detail });
  });

  it('stops a linked user who is deactivated later', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const { account, code, state } = await googleCallback(user.email);
    expect((await finish({ code, state })).status).toBe(201);
    await api.app.get(UsersService).deactivate(user.email);
    const again = await authorizeInBrowser(await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT), GOOGLE_REDIRECT, { login: account });
    const response = await finish({ code: again.searchParams.get('code')!, state: again.searchParams.get('state')! });
    expect(response.status).toBe(401);
  });

  it('spends the state once, expires it after 10 minutes, and binds it to its redirect URI and provider', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const replay = await googleCallback(user.email);
    expect((await finish({ code: replay.code, state: replay.state })).status).toBe(201);
    const replayed = await finish({ code: replay.code, state: replay.state });
    expect(replayed.status).toBe(400);
    expect(((await replayed.json()) as Problem).errors?.state).toEqual([expect.stringContaining('already used')]);

    const late = await googleCallback(user.email);
    api.clock.advance(10 * 60 * 1000 + 1000);
    const expired = await finish({ code: late.code, state: late.state });
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as Problem).errors?.state).toEqual([expect.stringContaining('expired')]);
    api.clock.reset();

    const elsewhere = await googleCallback(user.email, { redirectUri: GOOGLE_REDIRECT });
    const mismatched = await finish({ code: elsewhere.code, state: elsewhere.state, redirect_uri: OTHER_REDIRECT });
    expect(mismatched.status).toBe(400);
    expect(((await mismatched.json()) as Problem).errors?.state).toEqual([expect.stringContaining('redirect_uri')]);

    // A Google state is no good at another provider's endpoint (not configured here: 404 first).
    const other = await googleCallback(user.email);
    expect((await api.request('/api/v1/auth/o/facebook/', json({ code: other.code, state: other.state }))).status).toBe(404);
    const missing = await finish({ code: other.code });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Problem).errors?.state).toEqual(['This field is required.']);
  });

  it('rejects an ID token signed with another key, for another audience, or with another nonce', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const cases: [string, typeof google.tamper][] = [
      ['foreign key', (claims) => ({ claims, foreignKey: true })],
      ['wrong aud', (claims) => ({ claims: { ...claims, aud: 'someone-else' } })],
      ['wrong nonce', (claims) => ({ claims: { ...claims, nonce: 'not-the-nonce' } })],
      [
        'expired',
        (claims) => ({ claims: { ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 } }),
      ],
      ['wrong iss', (claims) => ({ claims: { ...claims, iss: 'https://accounts.evil.example' } })],
    ];
    for (const [name, tamper] of cases) {
      const { code, state } = await googleCallback(user.email);
      google.tamper = tamper;
      const response = await finish({ code, state });
      expect({ name, status: response.status }).toEqual({ name, status: 401 });
      expect(((await response.json()) as Problem).code).toBe('authentication_failed');
    }
    // The untouched token passes, so the refusals above were the tampering's.
    google.tamper = (claims) => ({ claims });
    const { code, state } = await googleCallback(user.email);
    expect((await finish({ code, state })).status).toBe(201);
  });

  it('links a Google account to the signed-in user with a Bearer token, and refuses a second owner', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    const tokens = await login(api, user);
    // A Google account with another email, not even verified: linking rests on the user's session.
    const { account, code, state } = await googleCallback(`private-${unique()}@gmail.example`, {
      verified: false,
      linkWith: tokens.access,
    });
    const linked = await finish({ code, state }, bearer(tokens.access));
    expect(linked.status).toBe(201);
    expect(((await linked.json()) as LoginResult).user.id).toBe(user.id);

    const signIn = await authorizeInBrowser(await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT), GOOGLE_REDIRECT, { login: account });
    const signedIn = await finish({ code: signIn.searchParams.get('code')!, state: signIn.searchParams.get('state')! });
    expect(((await signedIn.json()) as LoginResult).user.id).toBe(user.id);

    // A user of another workspace cannot take the account over.
    const intruder = await createUser(api, await createWorkspace(api));
    const intruderAccess = (await login(api, intruder)).access;
    const attempt = await authorizeInBrowser(
      await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT, bearer(intruderAccess)),
      GOOGLE_REDIRECT,
      { login: account },
    );
    const taken = await finish(
      { code: attempt.searchParams.get('code')!, state: attempt.searchParams.get('state')! },
      bearer(intruderAccess),
    );
    expect(taken.status).toBe(409);
    expect(((await taken.json()) as Problem).code).toBe('conflict');
  });

  it('binds a link to the user who started it, so a code and state cannot be slipped to someone else', async () => {
    const victim = await createUser(api, await createWorkspace(api));
    const victimAccess = (await login(api, victim)).access;
    // The attacker's own Google account, through a login flow: a victim's token cannot finish it as a link.
    const login1 = await googleCallback(`attacker-${unique()}@example.com`, { verified: false });
    const slipped = await finish({ code: login1.code, state: login1.state }, bearer(victimAccess));
    expect(slipped.status).toBe(400);
    expect(((await slipped.json()) as Problem).errors?.state).toEqual([expect.stringContaining('for a login')]);

    // A link flow started by the attacker cannot be finished by the victim either, nor without a token.
    const attacker = await createUser(api, await createWorkspace(api));
    const attackerAccess = (await login(api, attacker)).access;
    const link1 = await googleCallback(`attacker-${unique()}@example.com`, { linkWith: attackerAccess });
    const other = await finish({ code: link1.code, state: link1.state }, bearer(victimAccess));
    expect(other.status).toBe(400);
    expect(((await other.json()) as Problem).errors?.state).toEqual([expect.stringContaining('link')]);
    const link2 = await googleCallback(`attacker-${unique()}@example.com`, { linkWith: attackerAccess });
    const anonymous = await finish({ code: link2.code, state: link2.state });
    expect(anonymous.status).toBe(400);
  });

  it('answers a bad credential on the POST with 401 or 403, never ignoring it', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    const { key } = await createApiKey(api, workspace);
    const first = await googleCallback(user.email);
    expect((await finish({ code: first.code, state: first.state }, bearer('not-a-token'))).status).toBe(401);
    const second = await googleCallback(user.email);
    expect((await finish({ code: second.code, state: second.state }, apiKeyHeader(key))).status).toBe(403);
  });

  it('explains a refused consent and a code the provider does not accept', async () => {
    const start = await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT);
    google.accounts.set('denier', { email: 'denier@example.com', email_verified: true });
    const denied = await authorizeInBrowser(start, GOOGLE_REDIRECT, { deny: true });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const refused = await finish({
      state: denied.searchParams.get('state')!,
      error: denied.searchParams.get('error')!,
      error_description: denied.searchParams.get('error_description') ?? '',
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Problem).errors?.code).toEqual([expect.stringContaining('access_denied')]);

    const user = await createUser(api, await createWorkspace(api));
    const { state } = await googleCallback(user.email);
    const badCode = await finish({ code: 'not-a-code-the-provider-issued', state });
    expect(badCode.status).toBe(400);
    expect(((await badCode.json()) as Problem).errors?.code).toEqual([expect.stringContaining('invalid_grant')]);
  });

  it('refuses unknown providers and redirect URIs off the allow-list', async () => {
    expect((await api.request('/api/v1/auth/o/github/?redirect_uri=x')).status).toBe(404);
    expect((await api.request('/api/v1/auth/o/facebook/?redirect_uri=x')).status).toBe(404);
    const missing = await api.request('/api/v1/auth/o/google-oauth2/');
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Problem).errors).toHaveProperty('redirect_uri');
    for (const uri of ['https://evil.example/callback', `${GOOGLE_REDIRECT}?next=/x`, 'not a url']) {
      const response = await api.request(`/api/v1/auth/o/google-oauth2/?redirect_uri=${encodeURIComponent(uri)}`);
      expect({ uri, status: response.status }).toEqual({ uri, status: 400 });
      expect(((await response.json()) as Problem).errors?.redirect_uri).toEqual([expect.stringContaining('not in')]);
    }
    // Unknown query parameters are ignored, as everywhere (SPEC section 4), however many.
    const extra = Array.from({ length: 1_001 }, (_, index) => `x${index}=1`).join('&');
    const ignoring = await api.request(`/api/v1/auth/o/google-oauth2/?redirect_uri=${encodeURIComponent(GOOGLE_REDIRECT)}&${extra}`);
    expect(ignoring.status).toBe(200);
    const url = new URL(await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT));
    expect(url.origin).toBe(google.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: google.clientId,
      redirect_uri: GOOGLE_REDIRECT,
      response_type: 'code',
      scope: 'openid email',
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.stringMatching(/^[\w-]{43}$/),
    });
  });

  it('keeps only a hash of the state, and purges expired ones', async () => {
    const url = new URL(await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT));
    const state = url.searchParams.get('state')!;
    const rows: { state_hash: Buffer }[] = await api.dataSource.query('SELECT state_hash FROM social_login_states');
    expect(rows.some((row) => row.state_hash.toString('hex') === state)).toBe(false);
    api.clock.advance(11 * 60 * 1000);
    await startLogin(api, 'google-oauth2', GOOGLE_REDIRECT);
    const [{ count }] = (await api.dataSource.query('SELECT count(*)::int AS count FROM social_login_states')) as [{ count: number }];
    expect(count).toBe(1);
  });
});

describe('social login with Facebook (OAuth 2 and the Graph API, against a local Graph server)', () => {
  let facebook: FakeFacebook;
  let api: TestApp;
  beforeAll(async () => {
    facebook = await startFakeFacebook();
    api = await startTestApp(providerEnv(undefined, facebook));
  });
  afterAll(async () => {
    await api.close();
    await facebook.close();
  });
  afterEach(() => {
    facebook.failing = false;
  });

  async function facebookCallback(signedIn: FakeFacebook['signedIn'], linkWith?: string) {
    facebook.signedIn = signedIn;
    const authorizationUrl = await startLogin(api, 'facebook', FACEBOOK_REDIRECT, linkWith ? bearer(linkWith) : {});
    const callback = await authorizeInBrowser(authorizationUrl, FACEBOOK_REDIRECT, { login: 'unused' });
    return {
      authorizationUrl: new URL(authorizationUrl),
      callback,
      code: callback.searchParams.get('code'),
      state: callback.searchParams.get('state')!,
    };
  }
  const finish = (body: Record<string, string | null>, headers: Record<string, string> = {}) =>
    api.request('/api/v1/auth/o/facebook/', json(body, headers));

  it('signs in only a user the Facebook account is linked to; linking takes a Bearer token', async () => {
    const user = await createUser(api, await createWorkspace(api));
    const person = { id: `${Date.now()}${Math.floor(Math.random() * 1000)}`, email: user.email };

    // Same email as the user, but Facebook does not say it is verified: no sign-in by email.
    const unlinked = await facebookCallback(person);
    expect(unlinked.authorizationUrl.pathname).toBe('/v25.0/dialog/oauth');
    expect(unlinked.authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const refused = await finish({ code: unlinked.code, state: unlinked.state });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as Problem).code).toBe('authentication_failed');

    const tokens = await login(api, user);
    const link = await facebookCallback(person, tokens.access);
    const linked = await finish({ code: link.code, state: link.state }, bearer(tokens.access));
    expect(linked.status).toBe(201);

    const again = await facebookCallback(person);
    const signedIn = await finish({ code: again.code, state: again.state });
    expect(signedIn.status).toBe(201);
    expect(((await signedIn.json()) as LoginResult).user).toEqual({ id: user.id, email: user.email });
    // Graph's `me` was called with a proof the local Graph checked (a wrong one is refused there).
    expect(facebook.calls).toContain('/v25.0/me');
  });

  it('explains a refused consent and a refused code, and answers 503 when Graph fails', async () => {
    const denied = await facebookCallback('deny');
    const refused = await finish({
      state: denied.state,
      error: denied.callback.searchParams.get('error'),
      error_description: denied.callback.searchParams.get('error_description'),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Problem).errors?.code).toEqual(['Facebook did not grant access (access_denied: Permissions error).']);

    const person = { id: '100200300400', email: `fb-${unique()}@example.com` };
    const used = await facebookCallback(person);
    const badCode = await finish({ code: 'AQD-not-a-code', state: used.state });
    expect(badCode.status).toBe(400);
    expect(((await badCode.json()) as Problem).errors?.code).toEqual([expect.stringContaining('OAuthException 100')]);

    const down = await facebookCallback(person);
    facebook.failing = true;
    const unavailable = await finish({ code: down.code, state: down.state });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('5');
    const text = await unavailable.text();
    expect(text).not.toContain(facebook.appSecret);
  });
});

describe('social login with FACEBOOK_TRUST_EMAIL=true', () => {
  let facebook: FakeFacebook;
  let api: TestApp;
  beforeAll(async () => {
    facebook = await startFakeFacebook();
    api = await startTestApp({ ...providerEnv(undefined, facebook), FACEBOOK_TRUST_EMAIL: 'true' });
  });
  afterAll(async () => {
    await api.close();
    await facebook.close();
  });

  it('signs in by the email Facebook returns and links the account on first use', async () => {
    const user = await createUser(api, await createWorkspace(api));
    facebook.signedIn = { id: '555000111', email: user.email };
    const first = await authorizeInBrowser(await startLogin(api, 'facebook', FACEBOOK_REDIRECT), FACEBOOK_REDIRECT, { login: 'unused' });
    const response = await api.request(
      '/api/v1/auth/o/facebook/',
      json({ code: first.searchParams.get('code'), state: first.searchParams.get('state') }),
    );
    expect(response.status).toBe(201);
    expect(((await response.json()) as LoginResult).user.id).toBe(user.id);
    const [{ user_id }] = (await api.dataSource.query(
      `SELECT user_id FROM social_identities WHERE provider = 'facebook' AND subject = '555000111'`,
    )) as [{ user_id: number }];
    expect(user_id).toBe(user.id);

    // Without an email from Facebook there is nothing to match.
    facebook.signedIn = { id: '555000222' };
    const second = await authorizeInBrowser(await startLogin(api, 'facebook', FACEBOOK_REDIRECT), FACEBOOK_REDIRECT, { login: 'unused' });
    const noEmail = await api.request(
      '/api/v1/auth/o/facebook/',
      json({ code: second.searchParams.get('code'), state: second.searchParams.get('state') }),
    );
    expect(noEmail.status).toBe(401);
  });
});

describe('failed social logins and an unreachable provider', () => {
  let api: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    // Port 9 (discard) on loopback: nothing listens, so discovery fails at once.
    api = await startTestApp({
      SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: GOOGLE_REDIRECT,
      GOOGLE_OAUTH2_CLIENT_ID: 'client',
      GOOGLE_OAUTH2_CLIENT_SECRET: 'secret',
      GOOGLE_OIDC_ISSUER: 'http://127.0.0.1:9',
      LOGIN_FAILURES_PER_IP: '2',
    });
    user = await createUser(api, await createWorkspace(api));
  });
  afterAll(() => api.close());

  it('answers 503 with Retry-After while Google cannot be reached', async () => {
    const response = await api.request(`/api/v1/auth/o/google-oauth2/?redirect_uri=${encodeURIComponent(GOOGLE_REDIRECT)}`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(((await response.json()) as Problem).code).toBe('service_unavailable');
  });

  it('counts failures per client IP together with password logins', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await api.request('/api/v1/auth/o/google-oauth2/', json({ code: 'x', state: `guess-${attempt}` }));
      expect(response.status).toBe(400);
    }
    const throttled = await api.request('/api/v1/auth/o/google-oauth2/', json({ code: 'x', state: 'guess-3' }));
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    // The password login of the same IP shares the count.
    expect((await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }))).status).toBe(429);
    expect((await api.request('/api/v1/jwt/create/', send('POST', { email: user.email, password: user.password }, {}))).status).toBe(429);
  });
});
