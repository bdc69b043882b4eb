import jwt from 'jsonwebtoken';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { UsersService } from '../src/users/users.service.js';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
  createUser,
  createWorkspace,
  json,
  login,
  type TestUser,
  type Workspace,
} from './support/factories.js';
import { startTestApp, TEST_ENV, type TestApp } from './support/test-app.js';

const ME = '/api/v1/users/me/';

describe('authentication (SPEC section 2)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let editor: TestUser;

  beforeAll(async () => {
    // High login-failure limits here; throttling has its own suite below.
    api = await startTestApp({ LOGIN_FAILURES_PER_EMAIL: '1000', LOGIN_FAILURES_PER_IP: '1000' });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
  });
  afterEach(() => api.clock.reset());
  afterAll(() => api.close());

  async function expectProblem(response: Response, status: number, code: string) {
    const body = (await response.json()) as { code: string; status: number };
    expect({ status: response.status, code: body.code }).toEqual({ status, code });
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    return body;
  }

  describe('POST /api/v1/jwt/create/', () => {
    it('returns an access and a refresh token with the documented claims', async () => {
      const response = await api.request('/api/v1/jwt/create/', json({ email: editor.email, password: editor.password }));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { access: string; refresh: string };
      expect(Object.keys(body).sort()).toEqual(['access', 'refresh']);
      const access = jwt.decode(body.access, { complete: true })!;
      expect(access.header.alg).toBe('HS256');
      expect(access.payload).toEqual({
        sub: String(editor.id),
        customer: workspace.customerId,
        role: 'editor',
        type: 'access',
        jti: expect.any(String),
        sid: expect.any(String),
        iat: expect.any(Number),
        exp: expect.any(Number),
        iss: 'audience-signal-platform',
      });
      const claims = access.payload as jwt.JwtPayload;
      expect(claims.exp! - claims.iat!).toBe(15 * 60);
      const refresh = jwt.decode(body.refresh) as jwt.JwtPayload;
      expect(refresh.type).toBe('refresh');
      expect(refresh.sid).toBe(claims.sid);
      expect(refresh.exp! - refresh.iat!).toBe(7 * 24 * 3600);
    });

    it('accepts the email in any letter case', async () => {
      const response = await api.request('/api/v1/jwt/create/', json({ email: editor.email.toUpperCase(), password: editor.password }));
      expect(response.status).toBe(200);
    });

    it.each([
      [{}, { email: ['This field is required.'], password: ['This field is required.'] }],
      [
        { email: '', password: '' },
        { email: ['This field may not be blank.'], password: ['This field may not be blank.'] },
      ],
      [{ email: '   ', password: 'x' }, { email: ['This field may not be blank.'] }],
      [
        { email: 5, password: ['x'] },
        { email: ['Not a valid string.'], password: ['Not a valid string.'] },
      ],
      [{ email: null, password: 'x' }, { email: ['This field may not be null.'] }],
    ])('answers 400 for missing or blank fields: %j', async (body, errors) => {
      const problem = await expectProblem(await api.request('/api/v1/jwt/create/', json(body)), 400, 'validation_error');
      expect((problem as unknown as { errors: unknown }).errors).toEqual(errors);
    });

    it('answers an unknown field with 400 under its name', async () => {
      const problem = await expectProblem(
        await api.request('/api/v1/jwt/create/', json({ email: editor.email, password: editor.password, remember: true })),
        400,
        'validation_error',
      );
      expect((problem as unknown as { errors: unknown }).errors).toEqual({ remember: ['Unknown field.'] });
    });

    it('gives the same 401 for a wrong password, an unknown email and an inactive user', async () => {
      const inactive = await createUser(api, workspace);
      await api.app.get(UsersService).deactivate(inactive.email);
      const attempts = [
        { email: editor.email, password: 'wrong password!' },
        { email: 'nobody@example.com', password: editor.password },
        { email: inactive.email, password: inactive.password },
      ];
      const bodies = [];
      for (const attempt of attempts) {
        const response = await api.request('/api/v1/jwt/create/', json(attempt));
        const body = (await expectProblem(response, 401, 'authentication_failed')) as unknown as Record<string, unknown>;
        expect(response.headers.get('www-authenticate')).toContain('Bearer');
        delete body.request_id;
        bodies.push(body);
      }
      expect(bodies[1]).toEqual(bodies[0]);
      expect(bodies[2]).toEqual(bodies[0]);
    });

    it('answers a non-JSON body with 415, malformed JSON with 400 parse_error and a 2 MiB body with 413', async () => {
      await expectProblem(
        await api.request('/api/v1/jwt/create/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'email=a' }),
        415,
        'unsupported_media_type',
      );
      await expectProblem(
        await api.request('/api/v1/jwt/create/', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'email=a',
        }),
        415,
        'unsupported_media_type',
      );
      await expectProblem(
        await api.request('/api/v1/jwt/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email": ' }),
        400,
        'parse_error',
      );
      await expectProblem(
        await api.request('/api/v1/jwt/create/', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"__proto__": {"x": 1}}',
        }),
        400,
        'parse_error',
      );
      const big = JSON.stringify({ email: 'a'.repeat(2 * 1024 * 1024), password: 'x' });
      await expectProblem(
        await api.request('/api/v1/jwt/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }),
        413,
        'payload_too_large',
      );
    });

    it('answers GET with 405 and Allow: POST', async () => {
      const response = await api.request('/api/v1/jwt/create/');
      await expectProblem(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe('POST');
    });
  });

  describe('POST /api/v1/jwt/refresh/', () => {
    it('rotates: returns a new pair and spends the old refresh token', async () => {
      const first = await login(api, editor);
      const response = await api.request('/api/v1/jwt/refresh/', json({ refresh: first.refresh }));
      expect(response.status).toBe(200);
      const second = (await response.json()) as { access: string; refresh: string };
      expect(second.refresh).not.toBe(first.refresh);
      expect((await api.request(ME, { headers: bearer(second.access) })).status).toBe(200);
      const again = await api.request('/api/v1/jwt/refresh/', json({ refresh: second.refresh }));
      expect(again.status).toBe(200);
    });

    it('treats reuse of a rotated refresh token as theft: 401, and the whole session dies', async () => {
      const first = await login(api, editor);
      const second = (await (await api.request('/api/v1/jwt/refresh/', json({ refresh: first.refresh }))).json()) as {
        access: string;
        refresh: string;
      };

      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: first.refresh })), 401, 'token_not_valid');
      // The thief's reuse also kills the legitimate holder's newer tokens.
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: second.refresh })), 401, 'token_not_valid');
      await expectProblem(await api.request(ME, { headers: bearer(second.access) }), 401, 'token_not_valid');
      // Other sessions of the same user are untouched.
      const other = await login(api, editor);
      expect((await api.request(ME, { headers: bearer(other.access) })).status).toBe(200);
    });

    it('refuses an access token as a refresh token', async () => {
      const pair = await login(api, editor);
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.access })), 401, 'token_not_valid');
    });

    it('refuses garbage and a missing field', async () => {
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: 'not-a-jwt' })), 401, 'token_not_valid');
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({})), 400, 'validation_error');
    });

    it('refuses an expired refresh token', async () => {
      const pair = await login(api, editor);
      api.clock.advance(7 * 24 * 3600 * 1000 + 1000);
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.refresh })), 401, 'token_not_valid');
    });
  });

  describe('POST /api/v1/jwt/verify/', () => {
    it('answers {} for a valid access token and a valid refresh token', async () => {
      const pair = await login(api, editor);
      for (const token of [pair.access, pair.refresh]) {
        const response = await api.request('/api/v1/jwt/verify/', json({ token }));
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({});
      }
    });

    it('answers 401 token_not_valid for an invalid, expired or spent token', async () => {
      const pair = await login(api, editor);
      await expectProblem(await api.request('/api/v1/jwt/verify/', json({ token: 'abc.def.ghi' })), 401, 'token_not_valid');
      await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.refresh }));
      await expectProblem(await api.request('/api/v1/jwt/verify/', json({ token: pair.refresh })), 401, 'token_not_valid');
      api.clock.advance(16 * 60 * 1000);
      await expectProblem(await api.request('/api/v1/jwt/verify/', json({ token: pair.access })), 401, 'token_not_valid');
    });

    it('answers 400 without a token', async () => {
      await expectProblem(await api.request('/api/v1/jwt/verify/', json({ token: '' })), 400, 'validation_error');
    });
  });

  describe('POST /api/v1/jwt/logout/', () => {
    it('answers 204 and ends the session: its refresh and that access token stop working', async () => {
      const pair = await login(api, editor);
      const response = await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(pair.access) });
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      await expectProblem(await api.request(ME, { headers: bearer(pair.access) }), 401, 'token_not_valid');
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.refresh })), 401, 'token_not_valid');
      await expectProblem(
        await api.request('/api/v1/jwt/logout/', { method: 'POST', headers: bearer(pair.access) }),
        401,
        'token_not_valid',
      );
    });

    it('works with an empty JSON body too', async () => {
      const pair = await login(api, editor);
      const response = await api.request('/api/v1/jwt/logout/', {
        method: 'POST',
        headers: { ...bearer(pair.access), 'content-type': 'application/json' },
      });
      expect(response.status).toBe(204);
    });

    it('answers 401 without credentials', async () => {
      await expectProblem(await api.request('/api/v1/jwt/logout/', { method: 'POST' }), 401, 'not_authenticated');
    });
  });

  describe('access tokens', () => {
    it('open /users/me/ with the documented fields', async () => {
      const pair = await login(api, editor);
      const response = await api.request(ME, { headers: bearer(pair.access) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toEqual({
        id: editor.id,
        email: editor.email,
        customer: workspace.customerId,
        role: 'editor',
        date_joined: expect.any(String),
      });
      expect(body.date_joined).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('reject alg "none"', async () => {
      const pair = await login(api, editor);
      const claims = jwt.decode(pair.access) as jwt.JwtPayload;
      const unsigned = jwt.sign(claims, '', { algorithm: 'none' });
      await expectProblem(await api.request(ME, { headers: bearer(unsigned) }), 401, 'authentication_failed');
    });

    it('reject HS512 and a token signed with another secret', async () => {
      const pair = await login(api, editor);
      const claims = jwt.decode(pair.access) as jwt.JwtPayload;
      const hs512 = jwt.sign(claims, TEST_ENV.JWT_SECRET, { algorithm: 'HS512' });
      const forged = jwt.sign(claims, 'another-secret-that-is-also-long-enough-000', { algorithm: 'HS256' });
      for (const token of [hs512, forged]) {
        const response = await api.request(ME, { headers: bearer(token) });
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toContain('Bearer');
      }
    });

    it('expire after 15 minutes (the clock is moved, not slept)', async () => {
      const pair = await login(api, editor);
      api.clock.advance(14 * 60 * 1000);
      expect((await api.request(ME, { headers: bearer(pair.access) })).status).toBe(200);
      api.clock.advance(2 * 60 * 1000);
      await expectProblem(await api.request(ME, { headers: bearer(pair.access) }), 401, 'token_not_valid');
    });

    it('refuse a refresh token used as an access token', async () => {
      const pair = await login(api, editor);
      await expectProblem(await api.request(ME, { headers: bearer(pair.refresh) }), 401, 'token_not_valid');
    });

    it('stop working at once when the user is deactivated', async () => {
      const user = await createUser(api, workspace, { role: 'viewer' });
      const pair = await login(api, user);
      expect((await api.request(ME, { headers: bearer(pair.access) })).status).toBe(200);
      await api.app.get(UsersService).deactivate(user.email);
      await expectProblem(await api.request(ME, { headers: bearer(pair.access) }), 401, 'token_not_valid');
      await expectProblem(await api.request('/api/v1/jwt/refresh/', json({ refresh: pair.refresh })), 401, 'token_not_valid');
    });
  });

  describe('malformed Authorization headers', () => {
    it.each([
      ['Bearer alone', 'Bearer'],
      ['Bearer and a space', 'Bearer '],
      ['Api-Key alone', 'Api-Key'],
      ['Basic', 'Basic dXNlcjpwYXNz'],
      ['doubled space', 'Bearer  abc.def.ghi'],
      ['two tokens', 'Bearer abc def'],
      ['lower-case scheme', 'api-key abc.def'],
      ['an 8 KB token', `Bearer ${'a'.repeat(8 * 1024)}`],
      ['a tab', 'Bearer\tabc'],
      ['an MCP token on /api/v1/', 'Bearer mcp_abcdefgh_0123456789abcdef'],
      ['a garbage JWT', 'Bearer abc.def.ghi'],
    ])('answer %s with 401 and WWW-Authenticate', async (_name, header) => {
      const response = await api.request(ME, { headers: { authorization: header } });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBeTruthy();
      expect(((await response.json()) as { code: string }).code).toMatch(/^(authentication_failed|token_not_valid)$/);
    });

    it('answer non-ASCII bytes with 401', async () => {
      const { request } = await import('node:http');
      const url = new URL(`${api.baseUrl}${ME}`);
      const status = await new Promise<number>((resolve, reject) => {
        const call = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            headers: { authorization: Buffer.from('Bearer tökén', 'latin1').toString('latin1') },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        call.on('error', reject);
        call.end();
      });
      expect(status).toBe(401);
    });

    it('answer a missing header with 401 not_authenticated', async () => {
      const response = await api.request(ME);
      await expectProblem(response, 401, 'not_authenticated');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api", Api-Key realm="api"');
    });
  });

  describe('API keys', () => {
    it('are not users: /users/me/ answers 403', async () => {
      const { key } = await createApiKey(api, workspace);
      await expectProblem(await api.request(ME, { headers: apiKeyHeader(key) }), 403, 'permission_denied');
    });

    it('answer 401 when unknown, revoked, expired or rotated past the grace period', async () => {
      const service = api.app.get(ApiKeysService);
      const unknown = (await createApiKey(api, workspace)).key.replace(/^[a-z0-9]{12}/, 'zzzzzzzzzzzz');
      const revoked = await createApiKey(api, workspace);
      await service.revoke(revoked.id);
      const expiring = await createApiKey(api, workspace, { expiresInDays: 1 });
      const rotated = await createApiKey(api, workspace);
      const { key: replacement } = await service.rotate(rotated.id, 24);

      // Within the grace period both the old and the new key work.
      expect((await api.request(ME, { headers: apiKeyHeader(rotated.key) })).status).toBe(403);
      expect((await api.request(ME, { headers: apiKeyHeader(replacement) })).status).toBe(403);
      expect((await api.request(ME, { headers: apiKeyHeader(expiring.key) })).status).toBe(403);

      api.clock.advance(25 * 3600 * 1000);
      for (const key of [unknown, revoked.key, expiring.key, rotated.key]) {
        const response = await api.request(ME, { headers: apiKeyHeader(key) });
        await expectProblem(response, 401, 'authentication_failed');
        expect(response.headers.get('www-authenticate')).toBe('Api-Key realm="api"');
      }
      expect((await api.request(ME, { headers: apiKeyHeader(replacement) })).status).toBe(403);
    });

    it('refuse a key whose secret is wrong', async () => {
      const { key } = await createApiKey(api, workspace);
      const wrong = key.slice(0, -2) + (key.endsWith('AA') ? 'BB' : 'AA');
      await expectProblem(await api.request(ME, { headers: apiKeyHeader(wrong) }), 401, 'authentication_failed');
    });
  });

  describe('rate limits', () => {
    it('announce the policy on authenticated responses', async () => {
      const pair = await login(api, editor);
      const response = await api.request(ME, { headers: bearer(pair.access) });
      expect(response.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
      expect(response.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    });
  });
});

describe('login throttling', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({
      LOGIN_FAILURES_PER_EMAIL: '3',
      LOGIN_FAILURES_PER_IP: '5',
      LOGIN_FAILURE_WINDOW_SECONDS: '600',
      RATE_LIMIT_PER_MINUTE: '1000',
    });
  });
  afterAll(() => api.close());

  it('answers 429 with Retry-After after too many failures for one email, until the window ends', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await api.request('/api/v1/jwt/create/', json({ email: user.email, password: 'wrong password' }))).status).toBe(401);
    }
    const throttled = await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }));
    expect(throttled.status).toBe(429);
    expect(((await throttled.json()) as { code: string }).code).toBe('throttled');
    const retryAfter = Number(throttled.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);

    api.clock.advance(601 * 1000);
    expect((await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }))).status).toBe(200);
  });

  it('answers 429 after too many failures from one client IP, whatever the email', async () => {
    api.clock.advance(601 * 1000);
    for (let attempt = 0; attempt < 5; attempt++) {
      expect(
        (await api.request('/api/v1/jwt/create/', json({ email: `nobody${attempt}@example.com`, password: 'wrong password' }))).status,
      ).toBe(401);
    }
    const response = await api.request('/api/v1/jwt/create/', json({ email: 'someone-else@example.com', password: 'whatever' }));
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBeTruthy();
  });
});
