import { randomBytes } from 'node:crypto';
import { AiModelInstancesRepository } from '../../src/ai-model-instances/ai-model-instances.repository.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import type { ApiKeyScope } from '../../src/api-keys/api-key.entity.js';
import { Tenant } from '../../src/common/tenancy/tenant.js';
import { TenantContext } from '../../src/common/tenancy/tenant-context.js';
import { ConnectionsRepository } from '../../src/connections/connections.repository.js';
import { CustomersService } from '../../src/customers/customers.service.js';
import type { UserRole } from '../../src/common/access/user-role.js';
import { UsersService } from '../../src/users/users.service.js';
import type { TestApp } from './test-app.js';

export const PASSWORD = 'correct horse battery staple';

export interface Workspace {
  customerId: number;
}

export interface TestUser {
  id: number;
  customerId: number;
  email: string;
  password: string;
  role: UserRole;
}

const unique = () => randomBytes(4).toString('hex');

/** Builds through the app's own services (and so its credential cache), never with raw SQL. */
export async function createWorkspace(api: TestApp, name = `Workspace ${unique()}`): Promise<Workspace> {
  const customer = await api.app.get(CustomersService).create(name);
  return { customerId: customer.id };
}

export async function createUser(
  api: TestApp,
  workspace: Workspace,
  overrides: { role?: UserRole; email?: string; password?: string } = {},
): Promise<TestUser> {
  const role = overrides.role ?? 'editor';
  const email = overrides.email ?? `${role}-${unique()}@example.com`;
  const password = overrides.password ?? PASSWORD;
  const user = await api.app.get(UsersService).create({ customerId: workspace.customerId, email, password, role });
  return { id: user.id, customerId: workspace.customerId, email, password, role };
}

export async function createApiKey(api: TestApp, workspace: Workspace, overrides: { scope?: ApiKeyScope; expiresInDays?: number } = {}) {
  const { apiKey, key } = await api.app
    .get(ApiKeysService)
    .create({ customerId: workspace.customerId, name: `key ${unique()}`, ...overrides });
  return { id: apiKey.id, key, prefix: apiKey.prefix };
}

export function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export async function login(api: TestApp, user: Pick<TestUser, 'email' | 'password'>): Promise<{ access: string; refresh: string }> {
  const response = await api.request('/api/v1/jwt/create/', json({ email: user.email, password: user.password }));
  if (response.status !== 200) throw new Error(`login failed with ${response.status}: ${await response.text()}`);
  return (await response.json()) as { access: string; refresh: string };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const apiKeyHeader = (key: string) => ({ authorization: `Api-Key ${key}` });

/** Runs `work` with one of the app's providers inside a workspace's tenant context, as the CLI and jobs do. */
export function inWorkspace<P, T>(
  api: TestApp,
  customerId: number,
  work: (provider: P) => Promise<T>,
  token: abstract new (...args: never[]) => P,
): Promise<T> {
  return api.app.get(TenantContext).run(Tenant.forOperator(customerId), () => work(api.app.get(token)));
}

/** Resources a test needs as fixtures; the API under test is exercised separately. */
export async function createConnection(
  api: TestApp,
  workspace: Workspace,
  overrides: { status?: 'active' | 'expired' | 'revoked' | 'error'; platform?: 'google_ads' | 'meta_ads'; accountName?: string } = {},
): Promise<{ id: number }> {
  const connection = await inWorkspace(
    api,
    workspace.customerId,
    (connections) =>
      connections.insert({
        platform: overrides.platform ?? 'google_ads',
        externalAccountId: `${Math.floor(Math.random() * 1e10)}`,
        accountName: overrides.accountName ?? `Account ${unique()}`,
        status: overrides.status ?? 'active',
        // What today's flow grants: both Google scopes (SPEC 10.3), or Meta's two permissions.
        scopes:
          (overrides.platform ?? 'google_ads') === 'google_ads'
            ? ['https://www.googleapis.com/auth/adwords', 'https://www.googleapis.com/auth/datamanager']
            : ['ads_management', 'ads_read'],
      }),
    ConnectionsRepository,
  );
  return { id: connection.id };
}

export async function createModelInstance(
  api: TestApp,
  workspace: Workspace,
  overrides: { status?: 'pending' | 'training' | 'ready' | 'failed' | 'archived'; name?: string } = {},
): Promise<{ id: number }> {
  const model = await inWorkspace(
    api,
    workspace.customerId,
    (models) =>
      models.insert({
        name: overrides.name ?? `Model ${unique()}`,
        modelType: 'propensity',
        baseModel: 'gbm-v3',
        status: overrides.status ?? 'ready',
      }),
    AiModelInstancesRepository,
  );
  return { id: model.id };
}

export function send(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', body: unknown, headers: Record<string, string>): RequestInit {
  return body === undefined
    ? { method, headers }
    : { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
