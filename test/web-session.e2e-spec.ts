import { type TestApp, startTestApp } from './support/test-app.js';
import { bearer, createUser, createWorkspace, json, type TestUser } from './support/factories.js';

/**
 * The web interface's server side (issue 14): its pages at /app/ with a strict policy, and its
 * session endpoints, which keep the refresh token in an HttpOnly cookie and refuse calls a page
 * of another site could make.
 */
describe('web interface: pages and session endpoints', () => {
  let api: TestApp;
  let user: TestUser;
  const SAME_ORIGIN = { 'x-requested-with': 'fetch' };

  beforeAll(async () => {
    api = await startTestApp();
    user = await createUser(api, await createWorkspace(api), { role: 'editor' });
  });
  afterAll(async () => {
    await api.close();
  });

  function sessionCall(path: string, init: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    return api.request(`/app/session/${path}`, {
      method: 'POST',
      headers: {
        ...SAME_ORIGIN,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.cookie ? { cookie: init.cookie } : {}),
        ...init.headers,
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  }

  /** `audience_session=<token>` from a response's Set-Cookie, and its attributes. */
  function sessionCookie(response: Response): { pair: string; attributes: string[] } {
    const header = response.headers.get('set-cookie') ?? '';
    const [pair, ...attributes] = header.split(';').map((part) => part.trim());
    expect(pair).toMatch(/^audience_session=/);
    return { pair: pair!, attributes };
  }

  async function signIn(): Promise<{ access: string; cookie: string }> {
    const response = await sessionCall('login', { body: { email: user.email, password: user.password } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access: string };
    return { access: body.access, cookie: sessionCookie(response).pair };
  }

  describe('pages', () => {
    it('serves the app at /app/ and at every deep link, with a policy that allows no inline script and no framing', async () => {
      for (const path of [
        '/app',
        '/app/',
        '/app/audiences',
        '/app/signals/12?created=1',
        '/app/auth/callback/google-oauth2?code=x&state=y',
      ]) {
        const response = await api.request(path);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
        const policy = response.headers.get('content-security-policy') ?? '';
        expect(policy).toContain("script-src 'self'");
        expect(policy).toContain("frame-ancestors 'none'");
        expect(policy).not.toContain('unsafe-inline');
        expect(response.headers.get('x-frame-options')).toBe('DENY');
        expect(response.headers.get('referrer-policy')).toBe('no-referrer');
        expect(response.headers.get('cache-control')).toBe('no-cache');
        const html = await response.text();
        expect(html).toContain('<div id="root"></div>');
        // Every script is a file of this origin.
        for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/src="\/app\/assets\/[^"]+\.js"/);
      }
    });

    it('serves the hashed assets for a year and answers an unknown one 404 in the problem shape', async () => {
      const html = await (await api.request('/app/')).text();
      const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1]!;
      const asset = await api.request(script);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Read the whole file: the server records a streamed response's metrics only once it has been sent,
      // and a large script left unread waits on the socket's back-pressure.
      expect((await asset.arrayBuffer()).byteLength).toBe(Number(asset.headers.get('content-length')));
      const missing = await api.request('/app/assets/missing-0000.js');
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ status: 404, code: 'not_found' });
      expect((await api.request('/app/favicon.svg')).headers.get('content-type')).toBe('image/svg+xml');
      // One route label for every asset, whatever the build's hashed file names.
      const metrics = await (await api.request('/metrics')).text();
      const routes = new Set([...metrics.matchAll(/route="([^"]*)"/g)].map((match) => match[1]));
      expect(routes).toContain('/app/assets/*');
      expect([...routes].filter((route) => route!.startsWith('/app/assets/') && route !== '/app/assets/*')).toEqual([]);
    });

    it('serves no file from outside the build, whatever the path tricks', async () => {
      for (const path of [
        '/app/assets/../../package.json',
        '/app/assets/%2e%2e/%2e%2e/package.json',
        '/app/assets/..%2f..%2fpackage.json',
        '/app/%2e%2e/package.json',
        '/app/assets/%252e%252e/package.json',
        '/app/..%2fpackage.json',
      ]) {
        const response = await api.request(path);
        const text = await response.text();
        expect({ path, leaked: text.includes('audience-signal-platform-api') }).toEqual({ path, leaked: false });
        expect([200, 400, 404]).toContain(response.status);
      }
    });

    it('answers a GET on a session endpoint 405, not the page', async () => {
      const response = await api.request('/app/session/login');
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toMatchObject({ code: 'method_not_allowed' });
    });
  });

  describe('session endpoints', () => {
    it('tells the page which sign-in and connect options exist', async () => {
      const response = await api.request('/app/session/config');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ social_providers: [], ad_platforms: [] });
    });

    it('signs in with the refresh token in an HttpOnly, SameSite=Strict cookie scoped to /app/session/, never in the body', async () => {
      const response = await sessionCall('login', { body: { email: user.email, password: user.password } });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = (await response.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['access', 'expires_in']);
      expect(body.expires_in).toBe(api.config.jwtAccessTtlSeconds);
      const { attributes } = sessionCookie(response);
      expect(attributes).toEqual(
        expect.arrayContaining(['Path=/app/session/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${api.config.jwtRefreshTtlSeconds}`]),
      );
      // Plain http here: no Secure flag, or the browser would drop the cookie.
      expect(attributes).not.toContain('Secure');
      const me = await api.request('/api/v1/users/me/', { headers: bearer(body.access as string) });
      expect(await me.json()).toMatchObject({ id: user.id, email: user.email });
    });

    it('answers a wrong password as the token endpoint does, and sets no cookie', async () => {
      const response = await sessionCall('login', { body: { email: user.email, password: 'wrong password' } });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'authentication_failed' });
      expect(response.headers.get('set-cookie')).toBeNull();
      const blank = await sessionCall('login', { body: { email: '', password: '' } });
      expect(blank.status).toBe(400);
      expect(await blank.json()).toMatchObject({
        code: 'validation_error',
        errors: { email: expect.any(Array), password: expect.any(Array) },
      });
      const unknown = await sessionCall('login', { body: { email: user.email, password: user.password, refresh: 'x' } });
      expect(unknown.status).toBe(400);
    });

    it('refuses every state-changing call without X-Requested-With, or from another site, before reading anything', async () => {
      const { cookie } = await signIn();
      for (const path of ['login', 'refresh', 'logout', 'social/google-oauth2']) {
        const bare = await api.request(`/app/session/${path}`, { method: 'POST', headers: { cookie } });
        expect({ path, status: bare.status }).toEqual({ path, status: 403 });
        expect(await bare.json()).toMatchObject({ code: 'permission_denied' });
        const crossSite = await sessionCall(path, { cookie, headers: { 'sec-fetch-site': 'cross-site' } });
        expect({ path, status: crossSite.status }).toEqual({ path, status: 403 });
      }
      // The refused logout ended nothing: the cookie still renews.
      expect((await sessionCall('refresh', { cookie })).status).toBe(200);
    });

    it('renews the access token and rotates the cookie; a spent cookie ends the whole session (reuse detection)', async () => {
      const first = await signIn();
      const renewed = await sessionCall('refresh', { cookie: first.cookie });
      expect(renewed.status).toBe(200);
      const second = sessionCookie(renewed).pair;
      expect(second).not.toBe(first.cookie);
      const { access } = (await renewed.json()) as { access: string };
      expect((await api.request('/api/v1/users/me/', { headers: bearer(access) })).status).toBe(200);

      const replayed = await sessionCall('refresh', { cookie: first.cookie });
      expect(replayed.status).toBe(401);
      expect(await replayed.json()).toMatchObject({ code: 'token_not_valid' });
      expect(sessionCookie(replayed).attributes).toContain('Max-Age=0');
      expect((await sessionCall('refresh', { cookie: second })).status).toBe(401);
      expect((await api.request('/api/v1/users/me/', { headers: bearer(access) })).status).toBe(401);
    });

    it('ends the session a browser held when it signs in again, so none is left that nothing can end', async () => {
      const first = await signIn();
      const again = await sessionCall('login', { cookie: first.cookie, body: { email: user.email, password: user.password } });
      expect(again.status).toBe(200);
      expect((await sessionCall('refresh', { cookie: first.cookie })).status).toBe(401);
      expect((await api.request('/api/v1/users/me/', { headers: bearer(first.access) })).status).toBe(401);
      expect((await sessionCall('refresh', { cookie: sessionCookie(again).pair })).status).toBe(200);
    });

    it('answers a refresh without a cookie 401 not_authenticated', async () => {
      const response = await sessionCall('refresh');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBeTruthy();
      expect(await response.json()).toMatchObject({ code: 'not_authenticated' });
      const garbage = await sessionCall('refresh', { cookie: 'audience_session=not-a-token' });
      expect(garbage.status).toBe(401);
    });

    it('signs out: clears the cookie, and neither it nor the access token works afterwards', async () => {
      const { access, cookie } = await signIn();
      const response = await sessionCall('logout', { cookie });
      expect(response.status).toBe(204);
      expect(sessionCookie(response)).toEqual({
        pair: 'audience_session=',
        attributes: expect.arrayContaining(['Max-Age=0', 'Path=/app/session/']),
      });
      expect((await sessionCall('refresh', { cookie })).status).toBe(401);
      expect((await api.request('/api/v1/users/me/', { headers: bearer(access) })).status).toBe(401);
      // Without a session it still clears the cookie.
      expect((await sessionCall('logout')).status).toBe(204);
    });

    it('answers a social sign-in with a provider that is not configured 404', async () => {
      const response = await sessionCall('social/google-oauth2', { body: { code: 'c', state: 's' } });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'not_found' });
    });

    it('keeps the token endpoints working for API clients, with the refresh token in the body as before', async () => {
      const response = await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }));
      expect(Object.keys((await response.json()) as object).sort()).toEqual(['access', 'refresh']);
      expect(response.headers.get('set-cookie')).toBeNull();
    });
  });
});
