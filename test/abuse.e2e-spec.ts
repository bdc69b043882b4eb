import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS } from '../src/common/http/json-limits.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, send } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const UNSTORABLE = 'Must not contain NUL characters or unpaired UTF-16 surrogates.';

/** A body of `count` distinct unknown keys, as the stalling attack on the token endpoint sent it. */
function wideBody(count: number): string {
  const members: string[] = [];
  for (let index = 0; index < count; index++) members.push(`"k${index}":1`);
  return `{${members.join(',')}}`;
}

/** Raw JSON text, so tests can send what JSON.stringify would never produce (lone surrogates as escapes). */
function raw(text: string, headers: Record<string, string> = {}, method = 'POST'): RequestInit {
  return { method, headers: { 'content-type': 'application/json', ...headers }, body: text };
}

describe('bodies and strings that used to stall the service or reach PostgreSQL', () => {
  let api: TestApp;
  let jwt: string;
  let viewerJwt: string;
  let key: string;

  beforeAll(async () => {
    api = await startTestApp();
    const workspace = await createWorkspace(api);
    jwt = (await login(api, await createUser(api, workspace, { role: 'editor' }))).access;
    viewerJwt = (await login(api, await createUser(api, workspace, { role: 'viewer' }))).access;
    key = (await createApiKey(api, workspace, { scope: 'write' })).key;
  });
  afterAll(() => api.close());

  async function expectProblem(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status, code });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
    return body;
  }

  describe('structure limits, checked before any other work', () => {
    it('refuses 94,000 unknown keys on the unauthenticated token endpoint', async () => {
      const response = await api.request('/api/v1/jwt/create/', raw(wideBody(94_000)));
      const body = await expectProblem(response, 400, 'parse_error');
      expect(body.detail).toBe(`The JSON body has more than ${MAX_JSON_KEYS} object keys.`);
    });

    it('refuses 30,000 repeated form fields on the unauthenticated social-login POST before any other work', async () => {
      // The stall of issue 25: one field repeated 30,000 times (90 KB), no credentials, a provider
      // that is not even configured. Each repeat used to copy the list, 17 s of blocked event loop.
      const form = (fields: number, name = (_index: number) => 'code') =>
        api.request('/api/v1/auth/o/any-provider/', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: Array.from({ length: fields }, (_, index) => `${name(index)}=x`).join('&'),
        });
      const repeated = await expectProblem(await form(30_000), 400, 'parse_error');
      expect(repeated.detail).toBe(`The form body has more than ${MAX_JSON_KEYS} fields.`);
      const distinct = await expectProblem(await form(30_000, (index) => `f${index}`), 400, 'parse_error');
      expect(distinct.detail).toBe(`The form body has more than ${MAX_JSON_KEYS} fields.`);
      // At the limit the body is parsed and the route answers as usual (no such provider).
      expect((await form(MAX_JSON_KEYS)).status).toBe(404);
    });

    it('refuses a body nested 10,000 levels deep with 400, not a stack overflow', async () => {
      const deep = `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      const body = await expectProblem(await api.request('/api/v1/audiences/', raw(deep, bearer(jwt))), 400, 'parse_error');
      expect(body.detail).toBe(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
    });

    it('accepts bodies right at the limits', async () => {
      let rules: unknown = { trait: 'a', op: 'exists' };
      // The body wraps `rules`, and the audience rules allow 10 levels: stay inside both (each `not` is a level).
      for (let level = 0; level < 9; level++) rules = { not: rules };
      const created = await api.request('/api/v1/audiences/', json({ name: 'Deep but fine', source_type: 'rules', rules }, bearer(jwt)));
      expect(created.status).toBe(201);

      const exactlyDeep = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
      // Deep enough for the parser, so the DTO answers (a body that is not an object).
      expect((await api.request('/api/v1/audiences/', raw(exactlyDeep, bearer(jwt)))).status).toBe(400);
      const many = await api.request('/api/v1/jwt/create/', raw(wideBody(MAX_JSON_KEYS)));
      const body = await expectProblem(many, 400, 'validation_error');
      expect(body.errors).toMatchObject({ k0: ['Unknown field.'] });
    });

    it('does not count brackets and colons inside strings', async () => {
      const name = `${'[{:'.repeat(400)}`;
      const response = await api.request('/api/v1/audiences/', json({ name: name.slice(0, 255), source_type: 'rules' }, bearer(jwt)));
      expect(response.status).toBe(201);
    });

    it('refuses a 60,000-argument MCP call before it reaches the tool', async () => {
      const token = await mcpToken();
      const args = Object.fromEntries(Array.from({ length: 60_000 }, (_, index) => [`a${index}`, 1]));
      const response = await api.request('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_audiences', arguments: args } }),
      });
      const body = await expectProblem(response, 400, 'parse_error');
      expect(body.detail).toBe(`The JSON body has more than ${MAX_JSON_KEYS} object keys.`);
    });
  });

  describe('NUL and unpaired surrogates', () => {
    it('refuses a NUL in the email on the unauthenticated token endpoint', async () => {
      const response = await api.request('/api/v1/jwt/create/', json({ email: 'a\u0000b', password: 'x' }));
      const body = await expectProblem(response, 400, 'validation_error');
      expect(body.errors).toEqual({ email: [UNSTORABLE] });
    });

    it.each([
      ['a NUL in a text field', '{"name":"a\\u0000b","source_type":"rules"}', 'name'],
      ['a lone high surrogate in a text field', '{"name":"a\\ud800b","source_type":"rules"}', 'name'],
      ['a lone low surrogate at the end', '{"name":"ab\\udc00","source_type":"rules"}', 'name'],
      ['a NUL inside a JSON object field', '{"name":"x","source_type":"rules","rules":{"a":["\\u0000"]}}', 'rules'],
      ['a lone surrogate inside a JSON object field', '{"name":"x","source_type":"rules","rules":{"a":{"b":"\\ud83d"}}}', 'rules'],
      ['a NUL in a JSON object key', '{"name":"x","source_type":"rules","rules":{"a\\u0000":1}}', 'rules'],
    ])('refuses %s with 400 under the field', async (_case, text, field) => {
      for (const authorization of [bearer(jwt), apiKeyHeader(key)]) {
        const body = await expectProblem(await api.request('/api/v1/audiences/', raw(text, authorization)), 400, 'validation_error');
        expect(body.errors).toEqual({ [field]: [UNSTORABLE] });
      }
    });

    it('refuses a NUL in a top-level key without echoing it', async () => {
      const body = await expectProblem(
        await api.request('/api/v1/audiences/', raw('{"na\\u0000me":"x"}', bearer(jwt))),
        400,
        'validation_error',
      );
      expect(Object.keys(body.errors as object)).toEqual(['na\uFFFDme']);
    });

    it('refuses them in PATCH bodies too, and changes nothing', async () => {
      const created = (await (
        await api.request('/api/v1/audiences/', json({ name: 'Kept', source_type: 'rules' }, bearer(jwt)))
      ).json()) as {
        id: number;
      };
      const path = `/api/v1/audiences/${created.id}/`;
      await expectProblem(await api.request(path, raw('{"name":"Changed\\u0000"}', bearer(jwt), 'PATCH')), 400, 'validation_error');
      expect(((await (await api.request(path, { headers: bearer(jwt) })).json()) as { name: string }).name).toBe('Kept');
    });

    it.each([
      ['/api/v1/audiences/?search=a%00b', 'search'],
      ['/api/v1/audiences/?status=%00', 'status'],
    ])('refuses %s under the parameter', async (path, parameter) => {
      const response = await api.request(path, { headers: bearer(jwt) });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors?: Record<string, string[]> }).errors).toEqual({ [parameter]: [UNSTORABLE] });
    });

    it('keeps ordinary non-ASCII text, emoji included', async () => {
      const name = 'Zoë 😀 日本';
      const response = await api.request(
        '/api/v1/audiences/',
        json({ name, source_type: 'rules', rules: { trait: 'city', op: 'eq', value: 'välue 😀' } }, bearer(jwt)),
      );
      expect(response.status).toBe(201);
      const body = (await response.json()) as { name: string; rules: { value: string } };
      expect(body.name).toBe(name);
      expect(body.rules.value).toBe('välue 😀');
      expect((await api.request(`/api/v1/audiences/?search=${encodeURIComponent('😀')}`, { headers: bearer(jwt) })).status).toBe(200);
    });
  });

  describe('MCP arguments', () => {
    it('refuses unknown arguments of list and get tools under their names', async () => {
      const client = new Client({ name: 'abuse-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${await mcpToken()}` } },
        }),
      );
      try {
        const list = await client.callTool({ name: 'list_audiences', arguments: { statuss: 'active' } });
        expect(list.isError).toBe(true);
        expect(JSON.parse((list.content as { text: string }[])[0]!.text)).toMatchObject({
          code: 'validation_error',
          errors: { statuss: ['Unknown argument.'] },
        });
        const get = await client.callTool({ name: 'get_audience', arguments: { id: 1, extra: true } });
        expect(JSON.parse((get.content as { text: string }[])[0]!.text)).toMatchObject({ errors: { extra: ['Unknown argument.'] } });
        const fine = await client.callTool({ name: 'list_audiences', arguments: { status: 'active', page_size: 5 } });
        expect(fine.isError).toBeFalsy();
      } finally {
        await client.close();
      }
    });
  });

  async function mcpToken(): Promise<string> {
    const response = await api.request('/api/v1/mcp-tokens/', send('POST', { name: `abuse ${Math.random()}` }, bearer(viewerJwt)));
    expect(response.status).toBe(201);
    return ((await response.json()) as { token: string }).token;
  }
});
