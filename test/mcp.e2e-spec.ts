import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OpenAPIObject } from '@nestjs/swagger';
import { toJsonSchema } from '../src/openapi/json-schemas.js';
import { UsersService } from '../src/users/users.service.js';
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
  type TestUser,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('MCP (SPEC sections 2 and 7)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let editor: TestUser;
  let editorJwt: string;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    editorJwt = (await login(api, editor)).access;
  });
  afterEach(() => api.clock.reset());
  afterAll(() => api.close());

  async function createToken(jwt: string, body: Record<string, unknown> = { name: 'agent' }) {
    const response = await api.request('/api/v1/mcp-tokens/', json(body, bearer(jwt)));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> & { id: number; token: string } };
  }

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return client;
  }

  const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;
  const toolError = (result: unknown) => {
    const typed = result as { isError?: boolean; content: { text: string }[] };
    expect(typed.isError).toBe(true);
    return JSON.parse(typed.content[0]!.text) as { code: string; detail: string; errors?: Record<string, string[]> };
  };

  describe('personal MCP tokens', () => {
    it('creates a token shown once, lists it without the secret, revokes it', async () => {
      const created = await createToken(editorJwt, { name: 'Claude', expires_in_days: 30 });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'token']);
      expect(created.body.token).toMatch(/^mcp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
      expect(Date.parse(created.body.expires_at as string) - Date.parse(created.body.created_at as string)).toBeGreaterThan(
        29.9 * 86_400_000,
      );

      const list = (await (await api.request('/api/v1/mcp-tokens/', { headers: bearer(editorJwt) })).json()) as {
        count: number;
        results: Record<string, unknown>[];
      };
      const listed = list.results.find((token) => token.id === created.body.id)!;
      expect(listed).toEqual({
        id: created.body.id,
        name: 'Claude',
        prefix: created.body.prefix,
        created_at: expect.any(String),
        expires_at: expect.any(String),
        last_used_at: null,
      });
      expect(JSON.stringify(list)).not.toContain(created.body.token);

      const revoked = await api.request(`/api/v1/mcp-tokens/${created.body.id}/`, send('DELETE', undefined, bearer(editorJwt)));
      expect(revoked.status).toBe(204);
      expect((await api.request(`/api/v1/mcp-tokens/${created.body.id}/`, send('DELETE', undefined, bearer(editorJwt)))).status).toBe(404);
    });

    it('defaults to 90 days and refuses 0, 366 and a string', async () => {
      const created = await createToken(editorJwt);
      expect(Math.round((Date.parse(created.body.expires_at as string) - Date.parse(created.body.created_at as string)) / 86_400_000)).toBe(
        90,
      );
      for (const expires_in_days of [0, 366, '30']) {
        const response = await createToken(editorJwt, { name: 'x', expires_in_days });
        expect(response.status).toBe(400);
        expect(Object.keys((response.body as unknown as { errors: object }).errors)).toEqual(['expires_in_days']);
      }
      expect((await createToken(editorJwt, { name: '' })).status).toBe(400);
    });

    it('lets viewers manage their own tokens, but not API keys', async () => {
      const viewer = await createUser(api, workspace, { role: 'viewer' });
      expect((await createToken((await login(api, viewer)).access)).status).toBe(201);
      const { key } = await createApiKey(api, workspace);
      const response = await api.request('/api/v1/mcp-tokens/', json({ name: 'x' }, apiKeyHeader(key)));
      expect(response.status).toBe(403);
      expect((await api.request('/api/v1/mcp-tokens/', { headers: apiKeyHeader(key) })).status).toBe(403);
    });

    it("answers 404 for another user's token", async () => {
      const other = await createUser(api, workspace);
      const theirs = await createToken((await login(api, other)).access);
      expect((await api.request(`/api/v1/mcp-tokens/${theirs.body.id}/`, send('DELETE', undefined, bearer(editorJwt)))).status).toBe(404);
      const mine = (await (await api.request('/api/v1/mcp-tokens/?page_size=100', { headers: bearer(editorJwt) })).json()) as {
        results: { id: number }[];
      };
      expect(mine.results.map((token) => token.id)).not.toContain(theirs.body.id);
    });
  });

  describe('the /mcp endpoint', () => {
    it('lists the tools with input and output schemas', async () => {
      const client = await connect((await createToken(editorJwt)).body.token);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['whoami', 'list_audiences', 'get_audience', 'create_audience', 'update_audience']),
      );
      for (const tool of tools) {
        expect(tool.description!.length).toBeGreaterThan(30);
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
      }
      // Truthful hints: reads are read-only and idempotent; an update may archive (final), so it is destructive.
      const hints = (name: string) => tools.find((tool) => tool.name === name)!.annotations;
      expect(hints('get_audience')).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(hints('create_audience')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      expect(hints('update_signal')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      await client.close();
    });

    it('states each tool’s schemas exactly as the REST operation it mirrors, with no type written as an array', async () => {
      const document = (await (await api.request('/api/schema/')).json()) as OpenAPIObject;
      const schemas = document.components!.schemas! as Record<string, { properties: Record<string, unknown>; required?: string[] }>;
      const json = (name: string) => toJsonSchema({ $ref: `#/components/schemas/${name}` }, document.components!.schemas as never);
      const client = await connect((await createToken(editorJwt)).body.token);
      const { tools } = await client.listTools();
      const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
      for (const [resource, dto] of [
        ['audience', 'Audience'],
        ['signal', 'Signal'],
      ] as const) {
        const create = tool(`create_${resource}`);
        expect(create.inputSchema.properties).toEqual((json(`Create${dto}Dto`) as { properties: unknown }).properties);
        expect(create.inputSchema.required).toEqual(schemas[`Create${dto}Dto`]!.required);
        // One audience is answered with its destinations (AudienceDetailDto), as REST does.
        const answered = dto === 'Audience' ? 'AudienceDetailDto' : `${dto}Dto`;
        expect(create.outputSchema).toEqual(json(answered));
        const update = tool(`update_${resource}`);
        expect(Object.keys(update.inputSchema.properties!).sort()).toEqual(
          ['id', ...Object.keys(schemas[`Update${dto}Dto`]!.properties)].sort(),
        );
        expect(update.outputSchema).toEqual(json(answered));
      }
      for (const [name, dto] of [
        ['get_audience', 'AudienceDetailDto'],
        ['get_sync', 'SyncRunDto'],
        ['get_signal', 'SignalDto'],
        ['get_ai_model_instance', 'AiModelInstanceDto'],
        ['get_connection', 'ConnectionDto'],
        ['get_person', 'PersonDto'],
      ] as const)
        expect(tool(name).outputSchema).toEqual(json(dto));
      // Portable: several MCP clients read `type` as one string (the MCP Inspector's type-union check).
      expect(JSON.stringify(tools)).not.toMatch(/"type":\[/);
      await client.close();
    });

    it('list_people and get_person read people as REST does, with their audiences and never an identifier', async () => {
      const client = await connect((await createToken(editorJwt)).body.token);
      const written = await api.request(
        '/api/v1/people/batch/',
        send(
          'POST',
          { people: [{ external_id: 'mcp-person', identifiers: { email: 'mcp.person@example.com' }, traits: { plan: 'pro' } }] },
          bearer(editorJwt),
        ),
      );
      expect(written.status).toBe(200);
      const list = structured(await client.callTool({ name: 'list_people', arguments: { external_id: 'mcp-person' } }));
      expect(list).toMatchObject({ count: 1, next_page: null, previous_page: null });
      const person = (list.results as Record<string, unknown>[])[0]!;
      expect(person).toMatchObject({ external_id: 'mcp-person', traits: { plan: 'pro' }, matched_keys: ['email'], audiences: [] });
      expect(structured(await client.callTool({ name: 'get_person', arguments: { id: person.id } }))).toEqual(person);
      expect(JSON.stringify(list)).not.toContain('mcp.person@example.com');
      const audience = structured(
        await client.callTool({ name: 'create_audience', arguments: { name: 'MCP members', source_type: 'rules' } }),
      );
      expect(audience).toMatchObject({ size: null, members_updated_at: null });
      await client.close();
    });

    it('whoami acts as the token owner', async () => {
      const client = await connect((await createToken(editorJwt)).body.token);
      expect(structured(await client.callTool({ name: 'whoami', arguments: {} }))).toEqual({
        id: editor.id,
        email: editor.email,
        customer: workspace.customerId,
        role: 'editor',
      });
      await client.close();
    });

    it('creates, reads, lists and updates audiences through the same rules as REST', async () => {
      const client = await connect((await createToken(editorJwt)).body.token);
      const created = structured(
        await client.callTool({ name: 'create_audience', arguments: { name: 'From an agent', source_type: 'rules' } }),
      );
      expect(created).toMatchObject({ name: 'From an agent', status: 'draft', customer: workspace.customerId });
      const rest = (await (await api.request(`/api/v1/audiences/${created.id}/`, { headers: bearer(editorJwt) })).json()) as Record<
        string,
        unknown
      >;
      expect(rest).toEqual(created);
      expect(structured(await client.callTool({ name: 'get_audience', arguments: { id: created.id } }))).toEqual(created);
      const list = structured(await client.callTool({ name: 'list_audiences', arguments: { search: 'agent', page_size: 5 } }));
      expect(list).toMatchObject({ count: 1, next_page: null, previous_page: null });
      // Pages are asked for by number, with the tool's own `page` argument: no REST link an agent could not follow.
      await client.callTool({ name: 'create_audience', arguments: { name: 'From an agent, again', source_type: 'rules' } });
      const first = structured(await client.callTool({ name: 'list_audiences', arguments: { search: 'agent', page_size: 1 } }));
      expect(first).toMatchObject({ count: 2, next_page: 2, previous_page: null });
      const second = structured(await client.callTool({ name: 'list_audiences', arguments: { search: 'agent', page_size: 1, page: 2 } }));
      expect(second).toMatchObject({ count: 2, next_page: null, previous_page: 1 });
      expect(JSON.stringify([first, second])).not.toMatch(/https?:\/\//);
      const updated = structured(await client.callTool({ name: 'update_audience', arguments: { id: created.id, status: 'active' } }));
      expect(updated.status).toBe('active');

      expect(
        toolError(await client.callTool({ name: 'create_audience', arguments: { name: 'From an agent', source_type: 'rules' } })),
      ).toEqual({
        code: 'validation_error',
        detail: 'Some fields are invalid.',
        errors: { name: ['An audience with this name already exists.'] },
      });
      expect(toolError(await client.callTool({ name: 'create_audience', arguments: { source_type: 'bogus', extra: 1 } })).errors).toEqual({
        name: ['This field is required.'],
        source_type: [expect.stringContaining('is not a valid choice')],
        extra: ['Unknown field.'],
      });
      expect(toolError(await client.callTool({ name: 'update_audience', arguments: { id: created.id, status: 'draft' } })).errors).toEqual({
        status: [expect.any(String)],
      });
      expect(toolError(await client.callTool({ name: 'get_audience', arguments: { id: 99999999 } })).code).toBe('not_found');
      expect(toolError(await client.callTool({ name: 'get_audience', arguments: { id: 'abc' } })).code).toBe('validation_error');
      expect(toolError(await client.callTool({ name: 'list_audiences', arguments: { status: 'bogus' } })).code).toBe('validation_error');
      expect(toolError(await client.callTool({ name: 'list_audiences', arguments: { page: 9 } }))).toMatchObject({
        code: 'not_found',
        detail: 'Invalid page.',
      });
      // A tool that does not exist is a protocol error (JSON-RPC -32602), not a tool result.
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: 'MCP error -32602: Unknown tool "no_such_tool". Call tools/list for the available tools.',
      });
      await client.close();
    });

    it('calls every tool with valid and invalid input', async () => {
      const connection = await createConnection(api, workspace, { status: 'active' });
      const model = await createModelInstance(api, workspace);
      const client = await connect((await createToken(editorJwt)).body.token);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        [
          'whoami',
          'list_audiences',
          'get_audience',
          'create_audience',
          'update_audience',
          'list_signals',
          'get_signal',
          'create_signal',
          'update_signal',
          'list_ai_model_instances',
          'get_ai_model_instance',
          'list_connections',
          'get_connection',
          'list_people',
          'get_person',
          'list_syncs',
          'get_sync',
          'start_sync',
        ].sort(),
      );

      const signal = structured(
        await client.callTool({
          name: 'create_signal',
          arguments: {
            name: 'Agent signal',
            signal_type: 'score',
            connection: connection.id,
            model_instance: model.id,
            config: { conversion_action_id: '123456789' },
          },
        }),
      );
      expect(signal).toMatchObject({ status: 0, connection: connection.id, model_instance: model.id, customer: workspace.customerId });
      expect(structured(await client.callTool({ name: 'update_signal', arguments: { id: signal.id, status: 1 } })).status).toBe(1);
      expect(structured(await client.callTool({ name: 'update_signal', arguments: { id: signal.id, status: 2 } })).status).toBe(2);
      expect(structured(await client.callTool({ name: 'get_signal', arguments: { id: signal.id } })).status).toBe(2);
      expect(structured(await client.callTool({ name: 'list_signals', arguments: { status: 2, connection: connection.id } })).count).toBe(
        1,
      );
      expect(toolError(await client.callTool({ name: 'update_signal', arguments: { id: signal.id, status: 3 } })).errors).toEqual({
        status: [expect.any(String)],
      });
      expect(
        toolError(await client.callTool({ name: 'create_signal', arguments: { name: 'x', signal_type: 'score', status: '1' } })).errors,
      ).toHaveProperty('status');
      expect(toolError(await client.callTool({ name: 'list_signals', arguments: { status: 'abc' } })).errors).toHaveProperty('status');

      expect(structured(await client.callTool({ name: 'get_ai_model_instance', arguments: { id: model.id } }))).toMatchObject({
        id: model.id,
        status: 'ready',
      });
      expect(
        structured(await client.callTool({ name: 'list_ai_model_instances', arguments: { status: 'ready' } })).count,
      ).toBeGreaterThanOrEqual(1);
      expect(toolError(await client.callTool({ name: 'list_ai_model_instances', arguments: { model_type: 'nope' } })).code).toBe(
        'validation_error',
      );
      expect(toolError(await client.callTool({ name: 'get_ai_model_instance', arguments: {} })).errors).toEqual({
        id: ['This field is required.'],
      });

      const fetched = structured(await client.callTool({ name: 'get_connection', arguments: { id: connection.id } }));
      expect(fetched).toMatchObject({ id: connection.id, status: 'active', platform: 'google_ads' });
      expect(JSON.stringify(fetched)).not.toMatch(/token_encrypted|access_token|refresh_token/);
      expect(
        structured(await client.callTool({ name: 'list_connections', arguments: { platform: 'google_ads' } })).count,
      ).toBeGreaterThanOrEqual(1);
      expect(toolError(await client.callTool({ name: 'list_connections', arguments: { platform: 'myspace' } })).code).toBe(
        'validation_error',
      );
      expect(toolError(await client.callTool({ name: 'get_connection', arguments: { id: 99999999 } })).code).toBe('not_found');
      await client.close();
    });

    it('start_sync, list_syncs and get_sync start and read runs as REST does; a viewer may read but not start one', async () => {
      const connection = await createConnection(api, workspace, { status: 'active' });
      const client = await connect((await createToken(editorJwt)).body.token);
      const audience = structured(
        await client.callTool({
          name: 'create_audience',
          arguments: { name: 'MCP synced', source_type: 'upload', connections: [connection.id], status: 'active' },
        }),
      );
      expect(audience.destinations).toEqual([
        expect.objectContaining({ connection: connection.id, platform: 'google_ads', last_run: null }),
      ]);
      const started = structured(await client.callTool({ name: 'start_sync', arguments: { audience: audience.id, dry_run: true } }));
      const run = (started.runs as Record<string, unknown>[])[0]!;
      expect(run).toMatchObject({ audience: audience.id, connection: connection.id, dry_run: true, status: 'queued', trigger: 'manual' });
      expect(structured(await client.callTool({ name: 'get_sync', arguments: { id: run.id } }))).toEqual(run);
      const listed = structured(await client.callTool({ name: 'list_syncs', arguments: { audience: audience.id } }));
      expect(listed).toMatchObject({ count: 1, results: [run] });
      expect(
        toolError(await client.callTool({ name: 'start_sync', arguments: { audience: audience.id, connection: 999_999_999 } })).code,
      ).toBe('validation_error');
      const viewer = await createUser(api, workspace, { role: 'viewer' });
      const viewing = await connect((await createToken((await login(api, viewer)).access)).body.token);
      expect(structured(await viewing.callTool({ name: 'get_sync', arguments: { id: run.id } }))).toEqual(run);
      expect(toolError(await viewing.callTool({ name: 'start_sync', arguments: { audience: audience.id } })).code).toBe(
        'permission_denied',
      );
      await viewing.close();
      await client.close();
    });

    it("refuses a viewer's writes with permission_denied but lets them read", async () => {
      const viewer = await createUser(api, workspace, { role: 'viewer' });
      const client = await connect((await createToken((await login(api, viewer)).access)).body.token);
      expect(toolError(await client.callTool({ name: 'create_audience', arguments: { name: 'nope', source_type: 'rules' } })).code).toBe(
        'permission_denied',
      );
      expect(structured(await client.callTool({ name: 'list_audiences', arguments: {} }))).toHaveProperty('count');
      await client.close();
    });

    it("keeps workspace A's token away from workspace B's objects", async () => {
      const other = await createWorkspace(api);
      const otherEditor = await createUser(api, other);
      const theirs = (await (
        await api.request(
          '/api/v1/audiences/',
          json({ name: 'B only', source_type: 'rules' }, bearer((await login(api, otherEditor)).access)),
        )
      ).json()) as { id: number };
      const client = await connect((await createToken(editorJwt)).body.token);
      expect(toolError(await client.callTool({ name: 'get_audience', arguments: { id: theirs.id } })).code).toBe('not_found');
      expect(toolError(await client.callTool({ name: 'update_audience', arguments: { id: theirs.id, name: 'hijacked' } })).code).toBe(
        'not_found',
      );
      const listed = structured(await client.callTool({ name: 'list_audiences', arguments: { search: 'B only' } }));
      expect(listed.count).toBe(0);
      await client.close();
    });

    async function rawMcp(headers: Record<string, string>, method = 'POST') {
      return api.request('/mcp', {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) : undefined,
      });
    }

    it('answers 401 with WWW-Authenticate for no token, a bad token, a JWT and an API key', async () => {
      const { key } = await createApiKey(api, workspace);
      for (const headers of [
        {},
        { authorization: 'Bearer mcp_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        bearer(editorJwt),
        apiKeyHeader(key),
        { authorization: 'Basic abc' },
      ]) {
        const response = await rawMcp(headers);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');
      }
    });

    it('refuses an MCP token on /api/v1/ with 401', async () => {
      const { token } = (await createToken(editorJwt)).body;
      expect((await api.request('/api/v1/audiences/', { headers: bearer(token) })).status).toBe(401);
    });

    it('refuses a JSON-RPC batch with one error instead of running its calls (MCP 2025-06-18 has no batches)', async () => {
      const { token } = (await createToken(editorJwt)).body;
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_audiences', arguments: {} } });
      const response = await api.request('/mcp', {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(Array.from({ length: 100 }, (_, index) => call(index + 1))),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'JSON-RPC batches are not supported: send one message per request.' },
        id: null,
      });
    });

    it('answers GET and DELETE on /mcp with 405', async () => {
      const { token } = (await createToken(editorJwt)).body;
      for (const method of ['GET', 'DELETE']) {
        const response = await rawMcp(bearer(token), method);
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('POST');
      }
    });

    it('stops a token that is revoked, expired, or whose user is deactivated', async () => {
      const revoked = (await createToken(editorJwt)).body;
      expect((await rawMcp(bearer(revoked.token))).status).toBe(200);
      await api.request(`/api/v1/mcp-tokens/${revoked.id}/`, send('DELETE', undefined, bearer(editorJwt)));
      expect((await rawMcp(bearer(revoked.token))).status).toBe(401);

      const expiring = (await createToken(editorJwt, { name: 'short', expires_in_days: 1 })).body;
      expect((await rawMcp(bearer(expiring.token))).status).toBe(200);
      api.clock.advance(86_400_000 + 1000);
      expect((await rawMcp(bearer(expiring.token))).status).toBe(401);
      api.clock.reset();

      const leaving = await createUser(api, workspace);
      const theirs = (await createToken((await login(api, leaving)).access)).body;
      expect((await rawMcp(bearer(theirs.token))).status).toBe(200);
      await api.app.get(UsersService).deactivate(leaving.email);
      expect((await rawMcp(bearer(theirs.token))).status).toBe(401);
    });
  });
});
