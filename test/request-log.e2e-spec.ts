import { Writable } from 'node:stream';
import { createLogger } from '../src/logging/logger.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

type Line = Record<string, unknown> & { level: 'info' | 'error'; msg: string };

describe('the request log line', () => {
  let api: TestApp;
  const lines: Line[] = [];

  beforeAll(async () => {
    // The app's real logger (createLogger, as main.ts builds it) writing into this array.
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line);
        callback();
      },
    });
    api = await startTestApp({ TRUSTED_PROXIES: '127.0.0.1' }, { logger: createLogger({ logLevel: 'info' }, stream) });
  });
  afterAll(() => api.close());

  const requestLine = (requestId: string) => lines.find((line) => line.msg === 'request' && line.request_id === requestId);

  it('names the identity by id (user or API key), never by secret, and the client IP through the trusted proxy', async () => {
    const workspace = await createWorkspace(api);
    const user = await createUser(api, workspace);
    const { access } = await login(api, user);
    const apiKey = await createApiKey(api, workspace);

    await api.request('/api/v1/audiences/', {
      headers: { ...bearer(access), 'x-request-id': 'log-jwt', 'x-forwarded-for': '203.0.113.7' },
    });
    await api.request('/api/v1/audiences/', { headers: { ...apiKeyHeader(apiKey.key), 'x-request-id': 'log-key' } });
    await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }, { 'x-request-id': 'log-login' }));
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(requestLine('log-jwt')).toMatchObject({
      level: 'info',
      status: 200,
      customer: workspace.customerId,
      identity: 'user',
      identity_id: user.id,
      ip: '203.0.113.7',
    });
    expect(requestLine('log-key')).toMatchObject({ identity: 'api_key', identity_id: apiKey.id, ip: '127.0.0.1' });
    expect(requestLine('log-login')).toMatchObject({ identity: null, identity_id: null, status: 200 });

    const text = JSON.stringify(lines);
    for (const secret of [access, apiKey.key, user.password]) expect(text).not.toContain(secret);
  });

  it('adds one line per MCP tool call with the tool, its outcome and the request id, and counts it in /metrics', async () => {
    const workspace = await createWorkspace(api);
    const { access } = await login(api, await createUser(api, workspace, { role: 'viewer' }));
    const created = await api.request('/api/v1/mcp-tokens/', json({ name: 'log test' }, bearer(access)));
    const { token } = (await created.json()) as { token: string };
    const callTool = (requestId: string, name: string, args: Record<string, unknown>) =>
      api.request('/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'x-request-id': requestId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });

    expect((await callTool('mcp-ok', 'list_audiences', {})).status).toBe(200);
    expect((await callTool('mcp-denied', 'create_audience', { name: 'x', source_type: 'rules' })).status).toBe(200);
    const toolLine = (requestId: string) => lines.find((line) => line.msg === 'MCP tool call' && line.request_id === requestId);
    expect(toolLine('mcp-ok')).toMatchObject({ level: 'info', tool: 'list_audiences', outcome: 'ok', duration_ms: expect.any(Number) });
    expect(toolLine('mcp-denied')).toMatchObject({ tool: 'create_audience', outcome: 'permission_denied' });
    expect(JSON.stringify(lines)).not.toContain(token);

    const metrics = await (await api.request('/metrics')).text();
    expect(metrics).toMatch(/mcp_tool_calls_total\{tool="list_audiences",outcome="ok"\} 1/);
    expect(metrics).toMatch(/mcp_tool_calls_total\{tool="create_audience",outcome="permission_denied"\} 1/);
    expect(metrics).toMatch(/mcp_tool_call_duration_seconds_count\{tool="list_audiences"\} 1/);
  });
});
