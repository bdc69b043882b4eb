import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { DEPENDENCY_RETRY_AFTER_SECONDS, DependencyUnavailableError, unavailableDependency } from '../src/common/errors/database-errors.js';
import { OutageLog } from '../src/common/errors/outage-log.js';
import { discardBody } from '../src/common/http/discard-body.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { LOGGER } from '../src/logging/logger.token.js';
import { createRedis } from '../src/redis/redis.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, send, type TestUser } from './support/factories.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * SPEC section 8: a dependency that is down (database, Redis) is a 503 service_unavailable with
 * Retry-After, never a 401 (which tells clients to drop valid credentials) nor a 500. The outage
 * is real: a TCP proxy in front of PostgreSQL (or Redis) is cut and restored, the app keeps running.
 */

const AUDIENCES = '/api/v1/audiences/';
const MCP_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/** The app's error lines, recorded instead of written (the test logger is silent). */
function recordErrors(api: TestApp): LogLine[] {
  const lines: LogLine[] = [];
  const logger = api.app.get<Logger>(LOGGER);
  logger.error = ((fields: Record<string, unknown>, msg: string) => {
    lines.push({ ...fields, msg });
  }) as Logger['error'];
  return lines;
}

async function expectUnavailable(response: Response, dependency: 'database' | 'redis' = 'database'): Promise<void> {
  const text = await response.text();
  expect({ status: response.status, body: text }).toEqual({ status: 503, body: expect.any(String) });
  expect(response.headers.get('retry-after')).toBe(String(DEPENDENCY_RETRY_AFTER_SECONDS));
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toEqual({
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    code: 'service_unavailable',
    detail: dependency === 'database' ? 'The database is temporarily unavailable. Try again shortly.' : expect.any(String),
    request_id: response.headers.get('x-request-id'),
  });
}

/** Repeats `attempt` until it answers `expected` (the pool and the LISTEN connection reconnect on their own). */
async function eventually(attempt: () => Promise<Response>, expected: number, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await attempt();
    if (response.status === expected || Date.now() > deadline) return response;
    expect([503, expected]).toContain(response.status);
    await discardBody(response);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function mcpCall(api: TestApp, token: string, tool: string, args: Record<string, unknown> = {}): Promise<Response> {
  return api.request('/mcp', {
    method: 'POST',
    headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }),
  });
}

function toolErrorCode(result: unknown): string {
  const typed = result as { isError?: boolean; content: { text: string }[] };
  expect(typed.isError).toBe(true);
  return (JSON.parse(typed.content[0]!.text) as { code: string }).code;
}

describe('a database outage', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let api: TestApp;
  let editor: TestUser;

  beforeAll(async () => {
    database = await createTestDatabase();
    const front = await TcpProxy.inFrontOf(database.url, 5432);
    proxy = front.proxy;
    api = await startTestApp({ DATABASE_URL: front.url, DATABASE_POOL_SIZE: '4', RATE_LIMIT_PER_MINUTE: '100000' });
    editor = await createUser(api, await createWorkspace(api), { role: 'editor' });
  });

  afterAll(async () => {
    await proxy.start().catch(() => {});
    await api.close();
    await proxy.stop();
    await database.drop();
  });

  async function createMcpToken(jwt: string): Promise<string> {
    const response = await api.request('/api/v1/mcp-tokens/', json({ name: 'agent' }, bearer(jwt)));
    expect(response.status).toBe(201);
    return ((await response.json()) as { token: string }).token;
  }

  it('answers 503 with Retry-After to every credential and token endpoint, and recovers without a restart', async () => {
    const errors = recordErrors(api);
    const workspace = { customerId: editor.customerId };
    const used = await login(api, editor);
    // A second login whose session has never been used: no cache can answer for it.
    const unused = await login(api, editor);
    const apiKey = await createApiKey(api, workspace);
    const unusedApiKey = await createApiKey(api, workspace);
    const mcpToken = await createMcpToken(used.access);
    const unusedMcpToken = await createMcpToken(used.access);

    const acknowledged: number[] = [];
    for (let index = 0; index < 5; index++) {
      const response = await api.request(AUDIENCES, send('POST', { name: `before ${index}`, source_type: 'rules' }, bearer(used.access)));
      expect(response.status).toBe(201);
      acknowledged.push(((await response.json()) as { id: number }).id);
    }
    // Seen once, so these credentials sit in the credential cache when the database goes.
    expect((await api.request(AUDIENCES, { headers: bearer(used.access) })).status).toBe(200);
    expect((await api.request(AUDIENCES, { headers: apiKeyHeader(apiKey.key) })).status).toBe(200);
    expect((await mcpCall(api, mcpToken, 'list_audiences')).status).toBe(200);

    const requests: Record<string, () => Promise<Response>> = {
      JWT: () => api.request(AUDIENCES, { headers: bearer(used.access) }),
      'JWT of an unused session': () => api.request(AUDIENCES, { headers: bearer(unused.access) }),
      'API key': () => api.request(AUDIENCES, { headers: apiKeyHeader(apiKey.key) }),
      'unused API key': () => api.request(AUDIENCES, { headers: apiKeyHeader(unusedApiKey.key) }),
      'write with an API key': () =>
        api.request(AUDIENCES, send('POST', { name: 'during', source_type: 'rules' }, apiKeyHeader(apiKey.key))),
      'MCP token': () => mcpCall(api, mcpToken, 'list_audiences'),
      'unused MCP token': () => mcpCall(api, unusedMcpToken, 'whoami'),
      login: () => api.request('/api/v1/jwt/create/', json({ email: editor.email, password: editor.password })),
      refresh: () => api.request('/api/v1/jwt/refresh/', json({ refresh: unused.refresh })),
      verify: () => api.request('/api/v1/jwt/verify/', json({ token: unused.access })),
      logout: () => api.request('/api/v1/jwt/logout/', send('POST', undefined, bearer(unused.access))),
    };

    await proxy.stop();
    try {
      for (const [name, request] of Object.entries(requests)) {
        const response = await request();
        if (name.includes('MCP') && response.status === 200) {
          // Authenticated from memory: the tool itself met the outage.
          const body = (await response.json()) as { result: unknown };
          expect(toolErrorCode(body.result)).toBe('service_unavailable');
          continue;
        }
        try {
          await expectUnavailable(response);
        } catch (error) {
          throw new Error(`${name}: ${(error as Error).message}`);
        }
      }
      // A credential that cannot be checked is not a bad one: an unknown key is a 503 too, not a 401...
      await expectUnavailable(await api.request(AUDIENCES, { headers: apiKeyHeader(`nosuchkey000.${'x'.repeat(43)}`) }));
      // ...but what is decided without the database still is a 401.
      const forged = await api.request(AUDIENCES, { headers: bearer(`${used.access.slice(0, -4)}AAAA`) });
      expect(forged.status).toBe(401);
    } finally {
      await proxy.start();
    }

    expect((await eventually(requests['JWT']!, 200)).status).toBe(200);
    expect((await eventually(requests['JWT of an unused session']!, 200)).status).toBe(200);
    expect((await eventually(requests['API key']!, 200)).status).toBe(200);
    expect((await eventually(requests['unused API key']!, 200)).status).toBe(200);
    const written = await eventually(requests['write with an API key']!, 201);
    expect(written.status).toBe(201);
    acknowledged.push(((await written.json()) as { id: number }).id);
    for (const name of ['MCP token', 'unused MCP token']) {
      const response = await eventually(requests[name]!, 200);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { result: { isError?: boolean } }).result.isError).toBeUndefined();
    }
    expect((await eventually(requests['login']!, 200)).status).toBe(200);
    expect((await eventually(requests['verify']!, 200)).status).toBe(200);
    // The refresh token was not spent by the failed attempt.
    const refreshed = await eventually(requests['refresh']!, 200);
    expect(refreshed.status).toBe(200);
    const logout = await api.request(
      '/api/v1/jwt/logout/',
      send('POST', undefined, bearer(((await refreshed.json()) as { access: string }).access)),
    );
    expect(logout.status).toBe(204);

    // Every write acknowledged with 201 is there.
    for (const id of acknowledged) expect((await api.request(`${AUDIENCES}${id}/`, { headers: bearer(used.access) })).status).toBe(200);

    // One error line per dependency per 10 s, each with its request's id, not one per failed request.
    const outageLines = errors.filter((line) => line.dependency === 'database');
    expect(outageLines.length).toBeGreaterThanOrEqual(1);
    expect(outageLines.length).toBeLessThanOrEqual(3);
    for (const line of errors) expect(line.request_id).toEqual(expect.any(String));
    expect(errors.filter((line) => line.msg === 'unhandled error')).toEqual([]);
  });

  it('answers 503 to a request in flight when the database goes, and service_unavailable to an MCP tool call', async () => {
    const { access } = await login(api, editor);
    const mcpToken = await createMcpToken(access);
    const client = new Client({ name: 'outage-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${mcpToken}` } },
      }),
    );
    // Warm the credentials, so the in-flight requests pass authentication and block in the handler.
    expect((await api.request(AUDIENCES, { headers: bearer(access) })).status).toBe(200);
    expect((await client.callTool({ name: 'list_audiences', arguments: {} })).isError).toBeUndefined();

    // Hold the audiences table (on a connection that bypasses the proxy), so the next reads and writes wait in PostgreSQL.
    const lock = database.dataSource.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE audiences IN ACCESS EXCLUSIVE MODE');
    try {
      const read = api.request(AUDIENCES, { headers: bearer(access) });
      const write = api.request(AUDIENCES, send('POST', { name: 'in flight', source_type: 'rules' }, bearer(access)));
      const tool = client.callTool({ name: 'list_audiences', arguments: {} });
      const deadline = Date.now() + 10_000;
      let waiting = 0;
      while (waiting < 3 && Date.now() < deadline) {
        const [row] = (await database.dataSource.query(
          "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )) as { waiting: number }[];
        waiting = row!.waiting;
        if (waiting < 3) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(waiting).toBe(3);

      await proxy.stop();
      await expectUnavailable(await read);
      await expectUnavailable(await write);
      expect(toolErrorCode(await tool)).toBe('service_unavailable');
    } finally {
      await lock.rollbackTransaction();
      await lock.release();
      await proxy.start();
    }

    expect((await eventually(() => api.request(AUDIENCES, { headers: bearer(access) }), 200)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    let result = await client.callTool({ name: 'list_audiences', arguments: {} });
    while (result.isError && Date.now() < deadline) {
      expect(toolErrorCode(result)).toBe('service_unavailable');
      await new Promise((resolve) => setTimeout(resolve, 100));
      result = await client.callTool({ name: 'list_audiences', arguments: {} });
    }
    expect(result.isError).toBeUndefined();
    await client.close();
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
const describeWithRedis = redisUrl ? describe : describe.skip;

describeWithRedis('a Redis outage', () => {
  const prefix = `audience-platform-outage-${process.env.TEST_RUN_ID ?? Date.now()}:`;
  let proxy: TcpProxy;
  let viaProxy: string;
  let api: TestApp;

  beforeAll(async () => {
    ({ proxy, url: viaProxy } = await TcpProxy.inFrontOf(redisUrl!, 6379));
    api = await startTestApp({ REDIS_URL: viaProxy, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '100000' });
  });

  afterAll(async () => {
    await proxy.start().catch(() => {});
    await api.close();
    await proxy.stop();
    const redis = new Redis(redisUrl!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('answers 503 with Retry-After where the rate limit cannot be counted, and recovers without a restart', async () => {
    const errors = recordErrors(api);
    const user = await createUser(api, await createWorkspace(api));
    const { access } = await login(api, user);
    const authenticated = () => api.request(AUDIENCES, { headers: bearer(access) });
    const loginAgain = () => api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }));
    expect((await authenticated()).status).toBe(200);

    await proxy.stop();
    await expectUnavailable(await authenticated(), 'redis');
    await expectUnavailable(await loginAgain(), 'redis');
    // Logs name Redis, not the database.
    expect(errors.map((line) => line.dependency)).toEqual(['redis']);
    expect(errors[0]!.request_id).toEqual(expect.any(String));

    await proxy.start();
    expect((await eventually(authenticated, 200)).status).toBe(200);
    expect((await eventually(loginAgain, 200)).status).toBe(200);
  });

  it('recognises a Redis command in flight when the connection goes', async () => {
    const redis = createRedis(viaProxy)!;
    await new Promise((resolve) => redis.once('ready', resolve));
    const blocked = failureOf(() => redis.blpop(`${prefix}nothing`, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await proxy.stop();
    const lost = await blocked;
    await proxy.start();
    expect((lost as Error).name).toBe('MaxRetriesPerRequestError');
    expect(unavailableDependency(lost)).toBe('redis');
    await new Promise((resolve) => redis.once('ready', resolve));
    redis.disconnect();
  });
});

/** The error `work` rejects with (it must reject). */
async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('unavailableDependency, on errors as pg, TypeORM and ioredis raise them', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const closedPort = async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
  };

  it('recognises a refused connection, a connect timeout and an exhausted pool', async () => {
    const refused = new URL(database.url);
    refused.port = String(await closedPort());
    const client = new pg.Client({ connectionString: refused.toString() });
    expect(unavailableDependency(await failureOf(() => client.connect()))).toBe('database');

    // A server that accepts and never answers. It never reads either, so it would not see the
    // client give up: the connections it took are closed by hand, or they would keep the test's
    // process alive after the run (Jest: "a worker process has failed to exit gracefully").
    const accepted: Socket[] = [];
    const silent = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const hanging = new URL(database.url);
    hanging.port = String((silent.address() as { port: number }).port);
    const hangingPool = new pg.Pool({ connectionString: hanging.toString(), connectionTimeoutMillis: 200 });
    const timedOut = await failureOf(() => hangingPool.query('SELECT 1'));
    expect((timedOut as Error).message).toBe('Connection terminated due to connection timeout');
    expect(unavailableDependency(timedOut)).toBe('database');
    await hangingPool.end();
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));

    // The one connection may take its time on a loaded machine; only the wait for a second is short.
    const pool = new pg.Pool({ connectionString: database.url, max: 1, connectionTimeoutMillis: 10_000 });
    const held = await pool.connect();
    pool.options.connectionTimeoutMillis = 200;
    const exhausted = await failureOf(() => pool.query('SELECT 1'));
    expect((exhausted as Error).message).toBe('timeout exceeded when trying to connect');
    expect(unavailableDependency(exhausted)).toBe('database');
    held.release();
    await pool.end();
  });

  it('recognises a terminated backend (57P01) and TypeORM’s QueryFailedError around it, but not a bad statement', async () => {
    expect(unavailableDependency(await failureOf(() => database.dataSource.query('SELEC 1')))).toBeUndefined();
    expect(unavailableDependency(await failureOf(() => database.dataSource.query('SELECT 1/0')))).toBeUndefined();

    // A pool of its own: the terminated connection goes back to its pool and fails the next query there too.
    const dataSource = await new DataSource(dataSourceOptions({ url: database.url, poolSize: 1 })).initialize();
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    const [{ pid }] = (await runner.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
    await database.dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The FATAL message has arrived: TypeORM released the runner when its connection reported the error.
    const terminated = await failureOf(() => runner.query('SELECT 1'));
    expect((terminated as Error).name).toBe('QueryRunnerAlreadyReleasedError');
    expect(unavailableDependency(terminated)).toBe('database');
    // Whether the pool hands out the dead connection once more depends on timing; if it does, that is an outage too.
    const next = await dataSource.query('SELECT 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(next === undefined || unavailableDependency(next) === 'database').toBe(true);
    await dataSource.destroy();
  });

  it('recognises a query cut mid-flight and a transaction whose connection died between statements', async () => {
    const target = new URL(database.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const dataSource = await new DataSource(dataSourceOptions({ url: viaProxy.toString(), poolSize: 2 })).initialize();
    try {
      const slow = failureOf(() => dataSource.query('SELECT pg_sleep(5)'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await proxy.stop();
      const cut = await slow;
      expect((cut as { constructor: { name: string } }).constructor.name).toBe('QueryFailedError');
      expect((cut as Error).message).toBe('Connection terminated unexpectedly');
      expect(unavailableDependency(cut)).toBe('database');
      expect(unavailableDependency(await failureOf(() => dataSource.query('SELECT 1')))).toBe('database');

      await proxy.start();
      const broken = await failureOf(() =>
        dataSource.transaction(async (manager) => {
          await manager.query('SELECT 1');
          await proxy.stop();
          await new Promise((resolve) => setTimeout(resolve, 100));
          await manager.query('SELECT 2');
        }),
      );
      expect((broken as Error).name).toBe('QueryRunnerProviderAlreadyReleasedError');
      expect(unavailableDependency(broken)).toBe('database');
    } finally {
      await proxy.stop();
      await dataSource.destroy().catch(() => {});
    }
  });

  it('recognises too many connections (53300)', async () => {
    const role = `outage_${process.env.TEST_RUN_ID ?? 'test'}`.toLowerCase();
    await database.dataSource.query(`CREATE ROLE ${role} LOGIN PASSWORD 'outage' CONNECTION LIMIT 0`);
    try {
      const url = new URL(database.url);
      url.username = role;
      url.password = 'outage';
      const refused = await failureOf(() => new pg.Client({ connectionString: url.toString() }).connect());
      expect((refused as { code?: string }).code).toBe('53300');
      expect(unavailableDependency(refused)).toBe('database');
    } finally {
      await database.dataSource.query(`DROP ROLE ${role}`);
    }
  });

  it('recognises Redis that is away, as the rate limiter reports it', async () => {
    // The app's own client options: no offline queue, so a command fails at once while disconnected.
    const away = createRedis(`redis://127.0.0.1:${await closedPort()}`)!;
    const refused = await failureOf(() => away.get('x'));
    expect((refused as Error).message).toBe("Stream isn't writeable and enableOfflineQueue options is false");
    expect(unavailableDependency(refused)).toBe('redis');
    away.disconnect();

    // The rate limiter names Redis itself: a bare ECONNREFUSED would read as the database's.
    const bare = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    expect(unavailableDependency(bare)).toBe('database');
    expect(unavailableDependency(new DependencyUnavailableError('redis', bare))).toBe('redis');
  });

  it('does not take an ad platform’s network error (fetch) for a database outage', async () => {
    const port = await closedPort();
    const error = await failureOf(() => fetch(`http://127.0.0.1:${port}/`));
    // A TypeError whose cause is the ECONNREFUSED.
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
    expect(unavailableDependency(error)).toBeUndefined();
  });
});

describe('OutageLog', () => {
  it('writes one line per dependency per 10 s and counts the lines it left out', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = { error: (fields: Record<string, unknown>, msg: string) => lines.push({ ...fields, msg }) } as unknown as Logger;
    let now = 1_000_000;
    const log = new OutageLog(logger, () => now);
    const down = new Error('connect ECONNREFUSED 127.0.0.1:5432');

    log.report('database', down, { request_id: 'a' });
    log.report('database', down, { request_id: 'b' });
    log.report('redis', down, { request_id: 'c' });
    now += 9_999;
    log.report('database', down, { request_id: 'd' });
    now += 1;
    log.report('database', down, { request_id: 'e' });

    expect(lines.map(({ dependency, request_id, suppressed, msg }) => ({ dependency, request_id, suppressed, msg }))).toEqual([
      { dependency: 'database', request_id: 'a', suppressed: 0, msg: 'database unavailable' },
      { dependency: 'redis', request_id: 'c', suppressed: 0, msg: 'redis unavailable' },
      { dependency: 'database', request_id: 'e', suppressed: 2, msg: 'database unavailable' },
    ]);
    expect(lines[0]!.err).toBe(down);
  });
});
