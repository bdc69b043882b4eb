import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Repository } from 'typeorm';
import { Audience } from '../src/audiences/audience.entity.js';
import { AudiencesRepository } from '../src/audiences/audiences.repository.js';
import { Tenant } from '../src/common/tenancy/tenant.js';
import { MissingTenantContextError, TenantContext } from '../src/common/tenancy/tenant-context.js';
import { parsePageRequest } from '../src/common/pagination/pagination.js';
import { ORDERING_FIELDS } from '../src/common/pagination/pagination.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, json, login, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** Reaches the protected query builder, to prove its tenant predicate cannot be replaced. */
class ProbeRepository extends AudiencesRepository {
  replacingWhere() {
    return this.query().where('1 = 1');
  }
  wideningWhere() {
    return this.query().orWhere('1 = 1');
  }
  raw(sql: string, parameters: unknown[] = []) {
    return this.tenantQuery(sql, parameters);
  }
}

describe('the tenant context', () => {
  let api: TestApp;
  let tenants: TenantContext;
  let a: Workspace;
  let b: Workspace;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    tenants = api.app.get(TenantContext);
    a = await createWorkspace(api);
    b = await createWorkspace(api);
  });
  afterAll(() => api.close());

  it('makes every repository call outside a workspace throw instead of reading all workspaces', async () => {
    const audiences = api.app.get(AudiencesRepository);
    const page = parsePageRequest({}, { orderingFields: ORDERING_FIELDS });
    await expect(audiences.findById(1)).rejects.toBeInstanceOf(MissingTenantContextError);
    await expect(audiences.list({ page }, page)).rejects.toBeInstanceOf(MissingTenantContextError);
    await expect(audiences.insert({ name: 'x', sourceType: 'rules' })).rejects.toBeInstanceOf(MissingTenantContextError);
    await expect(audiences.delete(1)).rejects.toBeInstanceOf(MissingTenantContextError);
    expect(() => tenants.current()).toThrow(MissingTenantContextError);
    expect(() => tenants.enter(Tenant.forOperator(a.customerId))).toThrow(MissingTenantContextError);
  });

  it('refuses where() and orWhere() on a tenant query, which would drop or widen the tenant predicate', () => {
    const probe = new ProbeRepository(api.dataSource.getRepository(Audience) as Repository<Audience>, tenants);
    tenants.run(Tenant.forOperator(a.customerId), () => {
      expect(() => probe.replacingWhere()).toThrow(/tenant predicate/);
      expect(() => probe.wideningWhere()).toThrow(/tenant predicate/);
    });
  });

  it('refuses a hand-written statement without the tenant predicate before it reaches PostgreSQL, and binds the tenant as $1', async () => {
    const probe = new ProbeRepository(api.dataSource.getRepository(Audience) as Repository<Audience>, tenants);
    await tenants.run(Tenant.forOperator(a.customerId), async () => {
      for (const unscoped of [
        'SELECT count(*) FROM audiences',
        'UPDATE audiences SET size = 0 WHERE id = $2',
        'DELETE FROM audience_connections WHERE customer_id = $2',
        'SELECT count(*) FROM audiences WHERE customer_id = $10',
        'INSERT INTO audience_connections (audience_id, customer_id, connection_id) VALUES ($2, $1, $3)',
      ]) {
        await expect(probe.raw(unscoped, [1, 2])).rejects.toThrow(/must narrow to customer_id = \$1/);
      }
      const { rows } = await probe.raw('SELECT $1::bigint AS tenant FROM audiences WHERE customer_id = $1 UNION ALL SELECT $1::bigint');
      expect(rows.map((row) => Number(row.tenant))).toEqual([a.customerId]);
    });
  });

  it('keeps concurrent runs apart across awaits', async () => {
    const seen = await Promise.all(
      Array.from({ length: 50 }, (_, index) => {
        const customerId = index % 2 === 0 ? a.customerId : b.customerId;
        return tenants.run(Tenant.forOperator(customerId), async () => {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          await api.app.get(AudiencesRepository).findById(1);
          return [customerId, tenants.current().customerId];
        });
      }),
    );
    for (const [expected, actual] of seen) expect(actual).toBe(expected);
  });

  it('never lets one request see another workspace under interleaved load, with JWTs and API keys', async () => {
    const workspaces = [a, b];
    const credentials = await Promise.all(
      workspaces.map(async (workspace) => {
        const user = await createUser(api, workspace, { role: 'editor' });
        const { access } = await login(api, user);
        const key = await createApiKey(api, workspace, { scope: 'write' });
        return { workspace, jwt: bearer(access), apiKey: apiKeyHeader(key.key) };
      }),
    );
    // Each workspace gets audiences whose names carry its id, so a leak is visible in any answer.
    for (const { workspace, jwt } of credentials) {
      for (let index = 0; index < 5; index++) {
        const created = await api.request(
          '/api/v1/audiences/',
          json({ name: `ws${workspace.customerId}-${index}`, source_type: 'rules' }, jwt),
        );
        expect(created.status).toBe(201);
      }
    }

    const requests = Array.from({ length: 240 }, (_, index) => {
      const { workspace, jwt, apiKey } = credentials[index % 2]!;
      const headers = index % 4 < 2 ? jwt : apiKey;
      const own = (body: { customer: number; name: string }) =>
        body.customer === workspace.customerId && body.name.startsWith(`ws${workspace.customerId}-`);
      switch (index % 3) {
        case 0:
          return api.request('/api/v1/audiences/?page_size=100', { headers }).then(async (response) => {
            const body = (await response.json()) as { results: { customer: number; name: string }[] };
            return response.status === 200 && body.results.length >= 5 && body.results.every(own);
          });
        case 1:
          return api
            .request('/api/v1/audiences/', json({ name: `ws${workspace.customerId}-load-${index}`, source_type: 'rules' }, headers))
            .then(async (response) => response.status === 201 && own((await response.json()) as { customer: number; name: string }));
        default:
          return api
            .request(`/api/v1/audiences/?search=ws${workspace.customerId === a.customerId ? b.customerId : a.customerId}-`, { headers })
            .then(async (response) => response.status === 200 && ((await response.json()) as { count: number }).count === 0);
      }
    });
    const outcomes = await Promise.all(requests);
    expect(outcomes.filter((ok) => !ok)).toHaveLength(0);

    // What was written landed in the workspace that wrote it.
    const rows: { customer_id: number; name: string }[] = await api.dataSource.query(
      "SELECT customer_id, name FROM audiences WHERE name LIKE 'ws%' AND customer_id IN ($1, $2)",
      [a.customerId, b.customerId],
    );
    expect(rows.length).toBe(10 + 80);
    for (const row of rows) expect(row.name.startsWith(`ws${row.customer_id}-`)).toBe(true);
  });

  it('scopes MCP tool calls made concurrently by two workspaces to their own', async () => {
    const clients = await Promise.all(
      [a, b].map(async (workspace) => {
        const user = await createUser(api, workspace, { role: 'viewer' });
        const { access } = await login(api, user);
        const response = await api.request('/api/v1/mcp-tokens/', json({ name: 'load' }, bearer(access)));
        expect(response.status).toBe(201);
        const { token } = (await response.json()) as { token: string };
        const client = new Client({ name: 'tenant-context-test', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
          }),
        );
        return { workspace, client };
      }),
    );
    try {
      const calls = Array.from({ length: 40 }, async (_, index) => {
        const { workspace, client } = clients[index % 2]!;
        const result = await client.callTool({ name: 'list_audiences', arguments: { page_size: 100 } });
        const { results } = (result as unknown as { structuredContent: { results: { customer: number }[] } }).structuredContent;
        return results.length > 0 && results.every((item) => item.customer === workspace.customerId);
      });
      const outcomes = await Promise.all(calls);
      expect(outcomes.filter((ok) => !ok)).toHaveLength(0);
    } finally {
      await Promise.all(clients.map(({ client }) => client.close()));
    }
  });
});
