import { request as httpRequest } from 'node:http';
import { createApiKey, createUser, createWorkspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A request with headers fetch() would not let a test set (Host). */
function call(api: TestApp, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const url = new URL(path, api.baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: payload === undefined ? 'GET' : 'POST',
        headers: {
          ...headers,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** A workspace with two audiences, so a one-item page has a `next` link; its write key's header. */
async function workspaceWithTwoAudiences(api: TestApp): Promise<Record<string, string>> {
  const workspace = await createWorkspace(api);
  const auth = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'write' })).key}` };
  for (const name of ['First', 'Second']) {
    const created = await api.request('/api/v1/audiences/', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name, source_type: 'rules' }),
    });
    expect(created.status).toBe(201);
  }
  return auth;
}

describe('absolute links and the Host header', () => {
  it('refuses a Host outside ALLOWED_HOSTS when links are built from it, and uses an allowed one', async () => {
    const api = await startTestApp({ ALLOWED_HOSTS: 'api.example.com,.tenant.example' });
    try {
      const auth = await workspaceWithTwoAudiences(api);
      const forged = await call(api, '/api/v1/audiences/?page_size=1', { ...auth, host: 'evil.example' });
      expect(forged.status).toBe(400);
      expect(forged.body).toMatchObject({ code: 'validation_error', errors: { host: ['This Host is not served here.'] } });

      for (const host of ['api.example.com:8443', 'eu.tenant.example', 'tenant.example']) {
        const page = await call(api, '/api/v1/audiences/?page_size=1', { ...auth, host });
        expect(page.status).toBe(200);
        expect(page.body.next).toBe(`http://${host}/api/v1/audiences/?page_size=1&page=2`);
      }
    } finally {
      await api.close();
    }
  });

  it('refuses a Host that is more than a host and a port with 400, whatever the route, so no link or redirect is built on it', async () => {
    const api = await startTestApp({ ALLOWED_HOSTS: '127.0.0.1' });
    try {
      const auth = await workspaceWithTwoAudiences(api);
      for (const host of ['127.0.0.1:80@evil.example', '127.0.0.1/evil.example', 'user@127.0.0.1']) {
        for (const path of ['/api/v1/audiences/?page_size=1', '/healthz', '/api/v1/auth/o/google-oauth2/?redirect_uri=http://127.0.0.1/']) {
          const answer = await call(api, path, { ...auth, host });
          expect({ host, path, status: answer.status, body: answer.body }).toMatchObject({
            status: 400,
            body: { code: 'validation_error', errors: { host: ['Host must be a host name or address with an optional port (RFC 9110).'] } },
          });
        }
      }
    } finally {
      await api.close();
    }
  });

  it('builds links on PUBLIC_BASE_URL whatever the Host, and does not believe X-Forwarded-* for it', async () => {
    const api = await startTestApp({ PUBLIC_BASE_URL: 'https://api.example.com' });
    try {
      const auth = await workspaceWithTwoAudiences(api);
      const page = await call(api, '/api/v1/audiences/?page_size=1', { ...auth, host: 'evil.example', 'x-forwarded-host': 'evil.example' });
      expect(page.status).toBe(200);
      expect(page.body.next).toBe('https://api.example.com/api/v1/audiences/?page_size=1&page=2');
    } finally {
      await api.close();
    }
  });
});

describe('X-Forwarded-For and the per-IP login limits', () => {
  const LIMITS = {
    LOGIN_FAILURES_PER_EMAIL_AND_IP: '2',
    LOGIN_FAILURES_PER_EMAIL: '1000',
    LOGIN_FAILURES_PER_IP: '1000',
  };

  async function lockFrom(api: TestApp, email: string, forwardedFor: string): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const failed = await call(api, '/api/v1/jwt/create/', { 'x-forwarded-for': forwardedFor }, { email, password: 'wrong' });
      expect(failed.status).toBe(401);
    }
  }

  it('ignores X-Forwarded-For without TRUSTED_PROXIES, so a client cannot pick a fresh IP per guess', async () => {
    const api = await startTestApp({ ...LIMITS, PUBLIC_BASE_URL: 'https://api.example.com' });
    try {
      const user = await createUser(api, await createWorkspace(api));
      await lockFrom(api, user.email, '203.0.113.9');
      const fresh = await call(
        api,
        '/api/v1/jwt/create/',
        { 'x-forwarded-for': '198.51.100.77' },
        { email: user.email, password: 'wrong' },
      );
      expect(fresh.status).toBe(429);
    } finally {
      await api.close();
    }
  });

  it('believes the trusted proxy: an attacker elsewhere does not lock the owner out', async () => {
    const api = await startTestApp({ ...LIMITS, TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const user = await createUser(api, await createWorkspace(api));
      await lockFrom(api, user.email, '203.0.113.9');
      const attacker = await call(
        api,
        '/api/v1/jwt/create/',
        { 'x-forwarded-for': '203.0.113.9' },
        { email: user.email, password: user.password },
      );
      expect(attacker.status).toBe(429);
      const owner = await call(
        api,
        '/api/v1/jwt/create/',
        { 'x-forwarded-for': '198.51.100.7' },
        { email: user.email, password: user.password },
      );
      expect(owner.status).toBe(200);
      expect(owner.body.access).toEqual(expect.any(String));
    } finally {
      await api.close();
    }
  });

  it('takes the scheme and host of links from a trusted proxy', async () => {
    const api = await startTestApp({ TRUSTED_PROXIES: '1', ALLOWED_HOSTS: 'api.example.com' });
    try {
      const auth = await workspaceWithTwoAudiences(api);
      const page = await call(api, '/api/v1/audiences/?page_size=1', {
        ...auth,
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'api.example.com',
      });
      expect(page.status).toBe(200);
      expect(page.body.next).toBe('https://api.example.com/api/v1/audiences/?page_size=1&page=2');
      const forged = await call(api, '/api/v1/audiences/?page_size=1', { ...auth, 'x-forwarded-host': 'evil.example' });
      expect(forged.status).toBe(400);
    } finally {
      await api.close();
    }
  });
});
