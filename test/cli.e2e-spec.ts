import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../src/cli/commands.js';
import { apiKeyHeader, bearer, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const API_KEY_FIELDS = [
  'id',
  'customer',
  'name',
  'prefix',
  'scope',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'replaced_by',
];
const KEY_FORMAT = /^[a-z0-9]{12}\.[A-Za-z0-9_-]{43}$/;
const HOUR_MS = 3600 * 1000;

/**
 * Another process's revocation reaches the app's credential cache through PostgreSQL NOTIFY, which
 * arrives on its own schedule: ask again every 50 ms until `expected` or 2 s have passed.
 */
async function pollStatus(request: () => Promise<Response>, expected: number): Promise<{ status: number; elapsedMs: number }> {
  const started = performance.now();
  for (;;) {
    const response = await request();
    await response.arrayBuffer();
    const elapsedMs = Math.round(performance.now() - started);
    if (response.status === expected || elapsedMs >= 2000) return { status: response.status, elapsedMs };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function msBetween(later: unknown, earlier: unknown): number {
  return new Date(later as string).getTime() - new Date(earlier as string).getTime();
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the single JSON line it must be on success. */
  json: Record<string, unknown>;
}

describe('audience-admin CLI', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Explicit secrets keep loadConfig from generating and writing development ones under .data.
    env = {
      DATABASE_URL: database.url,
      NODE_ENV: 'test',
      JWT_SECRET: 'cli-test-secret-that-is-long-enough-0123456789',
      ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    };
  });
  afterAll(() => database.drop());

  function cli(...argv: string[]): Promise<Run> {
    return cliAgainst(env, argv);
  }

  async function cliAgainst(cliEnv: Record<string, string>, argv: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      argv,
      { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) } },
      cliEnv,
    );
    let json: Record<string, unknown> = {};
    if (code === 0) {
      expect(stdout.endsWith('\n')).toBe(true);
      expect(stdout.trimEnd().split('\n')).toHaveLength(1);
      json = JSON.parse(stdout) as Record<string, unknown>;
      expect(stderr).toBe('');
    } else {
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    return { code, stdout, stderr, json };
  }

  function errorJson(run: Run): { error: string; detail: string; errors?: Record<string, string[]> } {
    return JSON.parse(run.stderr) as { error: string; detail: string; errors?: Record<string, string[]> };
  }

  async function createCustomer(name = 'Acme'): Promise<number> {
    const run = await cli('customer', 'create', '--name', name);
    expect(run.code).toBe(0);
    return run.json.id as number;
  }

  describe('customer create', () => {
    it('prints the new customer as one JSON object', async () => {
      const run = await cli('customer', 'create', '--name', '  Acme Corp ');
      expect(run.code).toBe(0);
      expect(run.json).toEqual({ id: expect.any(Number), name: 'Acme Corp', created_at: expect.any(String) });
      expect(new Date(run.json.created_at as string).toISOString()).toBe(run.json.created_at);
      const rows = await database.dataSource.query('SELECT name FROM customers WHERE id = $1', [run.json.id]);
      expect(rows).toEqual([{ name: 'Acme Corp' }]);
    });

    it('rejects a blank name with an error object on stderr and exit code 1', async () => {
      const run = await cli('customer', 'create', '--name', '   ');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toEqual({ error: 'validation_error', detail: expect.any(String), errors: { name: [expect.any(String)] } });
    });

    it('treats a missing --name as a usage error', async () => {
      const run = await cli('customer', 'create');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--name');
      expect(run.stderr).toContain('usage: audience-admin customer create --name N');
    });
  });

  describe('user create', () => {
    let customerId: number;
    beforeAll(async () => {
      customerId = await createCustomer();
    });

    it.each(['admin', 'editor', 'viewer'])('creates a user with role %s', async (role) => {
      const email = `${role}@example.com`;
      const password = `correct horse ${role}`;
      const run = await cli('user', 'create', '--customer', String(customerId), '--email', email, '--password', password, '--role', role);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.json).toEqual({
        id: expect.any(Number),
        email,
        customer: customerId,
        role,
        is_active: true,
        date_joined: expect.any(String),
      });
      const [row] = await database.dataSource.query('SELECT password_hash FROM users WHERE id = $1', [run.json.id]);
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(run.stdout).not.toContain(row.password_hash);
      expect(run.stdout).not.toContain('argon2');
      expect(run.stdout).not.toContain(password);
    });

    it('defaults to the viewer role', async () => {
      const run = await cli(
        'user',
        'create',
        '--customer',
        String(customerId),
        '--email',
        'default@example.com',
        '--password',
        'long enough',
      );
      expect(run.code).toBe(0);
      expect(run.json.role).toBe('viewer');
    });

    it('refuses an email that exists in another letter case', async () => {
      const first = await cli(
        'user',
        'create',
        '--customer',
        String(customerId),
        '--email',
        'Dup@Example.com',
        '--password',
        'long enough',
      );
      expect(first.code).toBe(0);
      const run = await cli('user', 'create', '--customer', String(customerId), '--email', 'dup@example.COM', '--password', 'long enough');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { email: [expect.any(String)] } });
    });

    it('refuses an unknown customer', async () => {
      const run = await cli('user', 'create', '--customer', '999999', '--email', 'ghost@example.com', '--password', 'long enough');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { customer: [expect.any(String)] } });
    });

    it('refuses an unknown role', async () => {
      const run = await cli(
        'user',
        'create',
        '--customer',
        String(customerId),
        '--email',
        'r@example.com',
        '--password',
        'long enough',
        '--role',
        'owner',
      );
      expect([1, 2]).toContain(run.code);
      expect(run.stderr).toContain('role');
    });

    it('reports service validation (short password) as JSON with field errors', async () => {
      const run = await cli('user', 'create', '--customer', String(customerId), '--email', 'short@example.com', '--password', 'short');
      expect(run.code).toBe(1);
      expect(errorJson(run).errors).toEqual({ password: [expect.any(String)] });
    });

    it.each(['abc', '0', '-1', '1.5', '99999999999999999'])('treats --customer %s as a usage error', async (value) => {
      const run = await cli('user', 'create', `--customer=${value}`, '--email', 'x@example.com', '--password', 'long enough');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--customer');
      expect(run.stderr).toContain('usage: audience-admin user create');
    });
  });

  describe('user deactivate', () => {
    it('marks the user inactive and prints it', async () => {
      const customerId = await createCustomer('Deactivate Co');
      const created = await cli(
        'user',
        'create',
        '--customer',
        String(customerId),
        '--email',
        'leaver@example.com',
        '--password',
        'long enough',
      );
      expect(created.code).toBe(0);

      const run = await cli('user', 'deactivate', '--email', 'LEAVER@example.com');
      expect(run.code).toBe(0);
      expect(run.json).toMatchObject({ id: created.json.id, email: 'leaver@example.com', is_active: false });
      expect(run.stdout).not.toContain('password');
      const rows = await database.dataSource.query('SELECT is_active FROM users WHERE id = $1', [created.json.id]);
      expect(rows).toEqual([{ is_active: false }]);
    });

    it('refuses an unknown email with exit code 1', async () => {
      const run = await cli('user', 'deactivate', '--email', 'nobody@example.com');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'not_found' });
    });
  });

  describe('migrate', () => {
    it('reports the applied migrations', async () => {
      const run = await cli('migrate');
      expect(run.code).toBe(0);
      expect(run.json).toEqual({ migrations: 'applied', applied: expect.arrayContaining([expect.stringMatching(/\d{13}$/)]) });
    });
  });

  describe('usage errors', () => {
    it('rejects an unknown command with exit code 2 and the list of commands', async () => {
      const run = await cli('customer', 'explode');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('unknown command "customer explode"');
      expect(run.stderr).toContain('user create');
    });

    it('rejects no command at all', async () => {
      const run = await cli();
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('no command given');
    });

    it('rejects an unknown option', async () => {
      const run = await cli('customer', 'create', '--name', 'X', '--colour', 'red');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--colour');
    });

    it('rejects stray positional arguments', async () => {
      const run = await cli('customer', 'create', '--name', 'X', 'extra');
      expect(run.code).toBe(2);
    });

    it('prints the full usage on --help', async () => {
      let stdout = '';
      const code = await runCli(
        ['--help'],
        { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: () => true } },
        env,
      );
      expect(code).toBe(0);
      expect(stdout).toContain('audience-admin user create --customer ID --email E --password P [--role admin|editor|viewer]');
    });
  });

  it('reports an unreachable database as one JSON line with exit code 1', async () => {
    const url = new URL(database.url);
    url.pathname = '/asp_no_such_database';
    let stderr = '';
    const code = await runCli(
      ['customer', 'create', '--name', 'Nowhere'],
      { stdout: { write: () => true }, stderr: { write: (chunk: string) => (stderr += chunk) } },
      { ...env, DATABASE_URL: url.toString() },
    );
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(stderr)).toMatchObject({ error: 'internal_error' });
  });

  async function createKey(customerId: number, ...extra: string[]): Promise<Run> {
    const run = await cli('apikey', 'create', '--customer', String(customerId), '--name', 'Integration', ...extra);
    expect(run.code).toBe(0);
    return run;
  }

  describe('apikey create', () => {
    let customerId: number;
    beforeAll(async () => {
      customerId = await createCustomer('Keys Co');
    });

    it('prints the new key once, with its fields, defaulting to write scope and no expiry', async () => {
      const before = Date.now();
      const run = await cli('apikey', 'create', '--customer', String(customerId), '--name', '  CRM sync ');
      expect(run.code).toBe(0);
      expect(run.json).toEqual({
        id: expect.any(Number),
        customer: customerId,
        name: 'CRM sync',
        prefix: expect.stringMatching(/^[a-z0-9]{12}$/),
        scope: 'write',
        created_at: expect.any(String),
        expires_at: null,
        key: expect.stringMatching(KEY_FORMAT),
      });
      expect(Object.keys(run.json)).toEqual(['id', 'customer', 'name', 'prefix', 'scope', 'created_at', 'expires_at', 'key']);
      expect((run.json.key as string).startsWith(`${run.json.prefix as string}.`)).toBe(true);
      expect(new Date(run.json.created_at as string).getTime()).toBeGreaterThanOrEqual(before - 1000);
      const [row] = await database.dataSource.query('SELECT key_hash FROM api_keys WHERE id = $1', [run.json.id]);
      expect(run.stdout).not.toContain((row.key_hash as Buffer).toString('hex'));
      expect(run.stdout).not.toContain((row.key_hash as Buffer).toString('base64'));
      const stored = JSON.stringify(await database.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [run.json.id]));
      expect(stored).not.toContain(run.json.key);
    });

    it('creates a read key that expires after --expires-in-days', async () => {
      const run = await createKey(customerId, '--scope', 'read', '--expires-in-days', '30');
      expect(run.json).toMatchObject({ scope: 'read', expires_at: expect.any(String) });
      expect(Math.abs(msBetween(run.json.expires_at, run.json.created_at) - 30 * 24 * HOUR_MS)).toBeLessThan(5000);
    });

    it('issues a different key every time', async () => {
      const first = await createKey(customerId);
      const second = await createKey(customerId);
      expect(second.json.key).not.toBe(first.json.key);
      expect(second.json.prefix).not.toBe(first.json.prefix);
    });

    it.each(['admin', 'READ', ''])('treats --scope "%s" as a usage error', async (scope) => {
      const run = await cli('apikey', 'create', '--customer', String(customerId), '--name', 'X', `--scope=${scope}`);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--scope must be one of read, write');
      expect(run.stderr).toContain('usage: audience-admin apikey create --customer ID --name N [--scope read|write] [--expires-in-days D]');
    });

    it.each(['1.5', 'abc', '7d', '', '1e3'])('treats --expires-in-days "%s" as a usage error', async (days) => {
      const run = await cli('apikey', 'create', '--customer', String(customerId), '--name', 'X', `--expires-in-days=${days}`);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--expires-in-days must be a whole number');
    });

    it.each(['0', '-3', '3651'])('refuses --expires-in-days %s with a field error and exit code 1', async (days) => {
      const run = await cli('apikey', 'create', '--customer', String(customerId), '--name', 'X', `--expires-in-days=${days}`);
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { expires_in_days: [expect.any(String)] } });
    });

    it('refuses an unknown customer with exit code 1', async () => {
      const run = await cli('apikey', 'create', '--customer', '999999', '--name', 'Ghost');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { customer: [expect.stringContaining('999999')] } });
    });

    it('treats a missing --name or --customer as a usage error', async () => {
      expect((await cli('apikey', 'create', '--customer', String(customerId))).code).toBe(2);
      expect((await cli('apikey', 'create', '--name', 'X')).code).toBe(2);
    });
  });

  describe('apikey list', () => {
    it("lists one customer's keys in creation order, never with the key or its hash", async () => {
      const customerId = await createCustomer('List Co');
      const otherId = await createCustomer('Other Co');
      const first = await createKey(customerId, '--scope', 'read');
      const second = await createKey(customerId, '--expires-in-days', '7');
      await createKey(otherId);

      const run = await cli('apikey', 'list', '--customer', String(customerId));
      expect(run.code).toBe(0);
      expect(Object.keys(run.json)).toEqual(['api_keys']);
      const keys = run.json.api_keys as Record<string, unknown>[];
      expect(keys.map((key) => key.id)).toEqual([first.json.id, second.json.id]);
      for (const key of keys) expect(Object.keys(key)).toEqual(API_KEY_FIELDS);
      expect(keys[0]).toEqual({
        ...first.json,
        key: undefined,
        revoked_at: null,
        last_used_at: null,
        replaced_by: null,
      });
      expect(keys[1]).toMatchObject({ id: second.json.id, expires_at: second.json.expires_at, scope: 'write' });

      for (const created of [first, second]) {
        const key = created.json.key as string;
        expect(run.stdout).not.toContain(key);
        expect(run.stdout).not.toContain(key.split('.')[1]);
      }
      const rows: { key_hash: Buffer }[] = await database.dataSource.query('SELECT key_hash FROM api_keys WHERE customer_id = $1', [
        customerId,
      ]);
      for (const row of rows) {
        expect(run.stdout).not.toContain(row.key_hash.toString('hex'));
        expect(run.stdout).not.toContain(row.key_hash.toString('base64'));
      }
      expect(run.stdout).not.toMatch(/hash/i);
    });

    it('prints an empty list for a customer without keys', async () => {
      const customerId = await createCustomer('Keyless Co');
      const run = await cli('apikey', 'list', '--customer', String(customerId));
      expect(run.code).toBe(0);
      expect(run.json).toEqual({ api_keys: [] });
    });

    it('refuses an unknown customer rather than printing an empty list', async () => {
      const run = await cli('apikey', 'list', '--customer', '999999');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { customer: [expect.any(String)] } });
    });

    it('treats a missing or malformed --customer as a usage error', async () => {
      expect((await cli('apikey', 'list')).code).toBe(2);
      const run = await cli('apikey', 'list', '--customer', 'acme');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('usage: audience-admin apikey list --customer ID');
    });
  });

  describe('apikey revoke', () => {
    let customerId: number;
    beforeAll(async () => {
      customerId = await createCustomer('Revoke Co');
    });

    it('prints the key with revoked_at set, and keeps that time when revoked again', async () => {
      const created = await createKey(customerId);
      const run = await cli('apikey', 'revoke', String(created.json.id));
      expect(run.code).toBe(0);
      expect(Object.keys(run.json)).toEqual(API_KEY_FIELDS);
      expect(run.json).toMatchObject({
        id: created.json.id,
        customer: customerId,
        prefix: created.json.prefix,
        revoked_at: expect.any(String),
      });
      expect(run.stdout).not.toContain(created.json.key);
      const [row] = await database.dataSource.query('SELECT revoked_at FROM api_keys WHERE id = $1', [created.json.id]);
      expect((row.revoked_at as Date).toISOString()).toBe(run.json.revoked_at);

      const again = await cli('apikey', 'revoke', String(created.json.id));
      expect(again.code).toBe(0);
      expect(again.json.revoked_at).toBe(run.json.revoked_at);
    });

    it('refuses an unknown id with exit code 1', async () => {
      const run = await cli('apikey', 'revoke', '999999');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'not_found', detail: expect.stringContaining('999999') });
    });

    it.each([[['abc']], [['0']], [[]], [['1', '2']], [['--id', '1']]])('treats arguments %j as a usage error', async (rest) => {
      const run = await cli('apikey', 'revoke', ...rest);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('usage: audience-admin apikey revoke ID');
    });
  });

  describe('apikey rotate', () => {
    let customerId: number;
    beforeAll(async () => {
      customerId = await createCustomer('Rotate Co');
    });

    it('prints the replacement key once and keeps the old key until the default 24 hour grace ends', async () => {
      const created = await createKey(customerId, '--scope', 'read');
      const before = Date.now();
      const run = await cli('apikey', 'rotate', String(created.json.id));
      expect(run.code).toBe(0);
      expect(run.json).toEqual({
        id: expect.any(Number),
        customer: customerId,
        name: 'Integration',
        prefix: expect.stringMatching(/^[a-z0-9]{12}$/),
        scope: 'read',
        created_at: expect.any(String),
        expires_at: null,
        key: expect.stringMatching(KEY_FORMAT),
        previous: { id: created.json.id, prefix: created.json.prefix, expires_at: expect.any(String) },
      });
      expect(Object.keys(run.json)).toEqual(['id', 'customer', 'name', 'prefix', 'scope', 'created_at', 'expires_at', 'key', 'previous']);
      expect(run.json.key).not.toBe(created.json.key);
      const previous = run.json.previous as Record<string, unknown>;
      expect(new Date(previous.expires_at as string).getTime() - before).toBeGreaterThanOrEqual(24 * HOUR_MS - 1000);
      expect(new Date(previous.expires_at as string).getTime() - before).toBeLessThan(24 * HOUR_MS + 5000);

      const list = await cli('apikey', 'list', '--customer', String(customerId));
      const old = (list.json.api_keys as Record<string, unknown>[]).find((key) => key.id === created.json.id);
      expect(old).toMatchObject({ replaced_by: run.json.id, expires_at: previous.expires_at, revoked_at: null });
      expect(list.stdout).not.toContain(run.json.key);
    });

    it('uses --grace-hours for the old key, and keeps an earlier expiry', async () => {
      const created = await createKey(customerId);
      const run = await cli('apikey', 'rotate', String(created.json.id), '--grace-hours', '2');
      expect(run.code).toBe(0);
      const previous = run.json.previous as Record<string, unknown>;
      expect(Math.abs(msBetween(previous.expires_at, run.json.created_at) - 2 * HOUR_MS)).toBeLessThan(5000);

      const soon = await createKey(customerId, '--expires-in-days', '1');
      const rotated = await cli('apikey', 'rotate', String(soon.json.id), '--grace-hours=48');
      expect(rotated.code).toBe(0);
      expect(rotated.json).toMatchObject({ expires_at: soon.json.expires_at, previous: { expires_at: soon.json.expires_at } });
    });

    it('refuses to rotate a key twice', async () => {
      const created = await createKey(customerId);
      const first = await cli('apikey', 'rotate', String(created.json.id));
      expect(first.code).toBe(0);
      const run = await cli('apikey', 'rotate', String(created.json.id));
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({
        error: 'conflict',
        detail: expect.stringContaining(`replaced by ${first.json.id as number}`),
      });
    });

    it('refuses to rotate a revoked key', async () => {
      const created = await createKey(customerId);
      expect((await cli('apikey', 'revoke', String(created.json.id))).code).toBe(0);
      const run = await cli('apikey', 'rotate', String(created.json.id));
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'conflict', detail: expect.stringContaining('revoked') });
    });

    it('refuses an unknown id with exit code 1', async () => {
      const run = await cli('apikey', 'rotate', '999999');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'not_found' });
    });

    it('refuses a grace period longer than a year with a field error', async () => {
      const created = await createKey(customerId);
      const run = await cli('apikey', 'rotate', String(created.json.id), '--grace-hours', '8761');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { grace_hours: [expect.any(String)] } });
    });

    it.each([[['1', '--grace-hours', 'soon']], [['1', '--grace-hours=1.5']], [['x']], [[]]])(
      'treats arguments %j as a usage error',
      async (rest) => {
        const run = await cli('apikey', 'rotate', ...rest);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain('usage: audience-admin apikey rotate ID [--grace-hours H]');
      },
    );
  });

  describe('development secrets on an external database (DATABASE_URL)', () => {
    // As a developer runs it: no secrets in the environment, a data directory of its own.
    const development = (dataDir: string) => ({ DATABASE_URL: database.url, NODE_ENV: 'development', DATA_DIR: dataDir });
    const connect = (cliEnv: Record<string, string>, customerId: number, account: string) =>
      cliAgainst(cliEnv, [
        'connection',
        'create',
        '--customer',
        String(customerId),
        '--platform',
        'google_ads',
        '--account-id',
        account,
        '--account-name',
        'Dev',
      ]);

    it('makes up none: commands that need no secret run, and connection commands ask for the server key', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'cli-secrets-'));
      const created = await cliAgainst(development(dataDir), ['customer', 'create', '--name', 'Secretless']);
      expect(created.code).toBe(0);
      expect(readdirSync(dataDir)).toEqual([]);

      const refused = await connect(development(dataDir), created.json.id as number, '111-000-0001');
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toEqual({
        error: 'invalid_configuration',
        detail: expect.stringContaining('ENCRYPTION_KEY is not set'),
      });
      expect(readdirSync(dataDir)).toEqual([]);
    });

    it('uses the key a development server already keeps in the data directory', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'cli-secrets-'));
      writeFileSync(join(dataDir, 'encryption-key'), `${Buffer.alloc(32, 9).toString('base64')}\n`, { mode: 0o600 });
      const created = await cliAgainst(development(dataDir), ['customer', 'create', '--name', 'Shared key']);
      const run = await connect(development(dataDir), created.json.id as number, '111-000-0002');
      expect(run.code).toBe(0);
      expect(readdirSync(dataDir)).toEqual(['encryption-key']);
    });

    it('writes nothing into the folder it is started from', async () => {
      const elsewhere = mkdtempSync(join(tmpdir(), 'cli-cwd-'));
      const previous = process.cwd();
      process.chdir(elsewhere);
      try {
        const run = await cliAgainst(development('.data'), ['customer', 'create', '--name', 'From elsewhere']);
        expect(run.code).toBe(0);
        expect(readdirSync(elsewhere)).toEqual([]);
      } finally {
        process.chdir(previous);
      }
    });
  });

  describe('connection create', () => {
    let customerId: number;
    beforeAll(async () => {
      customerId = await createCustomer('Connections Co');
    });

    function createConnection(...options: string[]): Promise<Run> {
      return cli('connection', 'create', '--customer', String(customerId), ...options);
    }

    it('registers an active connection without tokens, scopes or user, and prints its fields', async () => {
      const run = await createConnection('--platform', 'meta_ads', '--account-id', 'act_1001', '--account-name', '  Acme EU ');
      expect(run.code).toBe(0);
      expect(run.json).toEqual({
        id: expect.any(Number),
        customer: customerId,
        platform: 'meta_ads',
        external_account_id: 'act_1001',
        account_name: 'Acme EU',
        status: 'active',
        status_reason: null,
        reauthorize_required: false,
        scopes: [],
        customer_match_terms_accepted: false,
        connected_by: null,
        token_expires_at: null,
        last_refreshed_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(Object.keys(run.json)).toEqual([
        'id',
        'customer',
        'platform',
        'external_account_id',
        'account_name',
        'status',
        'status_reason',
        'reauthorize_required',
        'scopes',
        'customer_match_terms_accepted',
        'connected_by',
        'token_expires_at',
        'last_refreshed_at',
        'created_at',
        'updated_at',
      ]);
      const rows = await database.dataSource.query(
        `SELECT customer_id, platform, external_account_id, account_name, status, scopes, connected_by,
                access_token_encrypted, refresh_token_encrypted, token_expires_at, last_refreshed_at
           FROM connections WHERE id = $1`,
        [run.json.id],
      );
      expect(rows).toEqual([
        {
          customer_id: customerId,
          platform: 'meta_ads',
          external_account_id: 'act_1001',
          account_name: 'Acme EU',
          status: 'active',
          scopes: [],
          connected_by: null,
          access_token_encrypted: null,
          refresh_token_encrypted: null,
          token_expires_at: null,
          last_refreshed_at: null,
        },
      ]);
    });

    it('refuses the same account of the same platform twice, naming the existing connection', async () => {
      const first = await createConnection('--platform', 'google_ads', '--account-id', '123-456-7890', '--account-name', 'Search');
      expect(first.code).toBe(0);
      const run = await createConnection('--platform', 'google_ads', '--account-id', ' 123-456-7890 ', '--account-name', 'Again');
      expect(run.code).toBe(1);
      expect(errorJson(run)).toEqual({
        error: 'conflict',
        detail: `Customer ${customerId} already has a google_ads connection for account 123-456-7890 (connection ${first.json.id as number}).`,
      });
      const rows = await database.dataSource.query('SELECT count(*)::int AS count FROM connections WHERE external_account_id = $1', [
        '123-456-7890',
      ]);
      expect(rows).toEqual([{ count: 1 }]);
    });

    it('accepts the same account id on the other platform and for another customer', async () => {
      const otherId = await createCustomer('Agency Co');
      const google = await createConnection('--platform', 'google_ads', '--account-id', 'shared-1', '--account-name', 'A');
      const meta = await createConnection('--platform', 'meta_ads', '--account-id', 'shared-1', '--account-name', 'B');
      const other = await cli(
        'connection',
        'create',
        '--customer',
        String(otherId),
        '--platform',
        'google_ads',
        '--account-id',
        'shared-1',
        '--account-name',
        'C',
      );
      expect([google.code, meta.code, other.code]).toEqual([0, 0, 0]);
      expect(other.json.customer).toBe(otherId);
    });

    it.each([
      { label: 'an empty account id', option: '--account-id', value: '', field: 'account_id' },
      { label: 'a blank account id', option: '--account-id', value: '   ', field: 'account_id' },
      { label: 'a 65-character account id', option: '--account-id', value: 'x'.repeat(65), field: 'account_id' },
      { label: 'a blank account name', option: '--account-name', value: '  ', field: 'account_name' },
      { label: 'a 256-character account name', option: '--account-name', value: 'n'.repeat(256), field: 'account_name' },
    ])('refuses $label with a field error and exit code 1', async ({ option, value, field }) => {
      const values: Record<string, string> = { '--account-id': 'acc-ok', '--account-name': 'Fine' };
      values[option] = value;
      const run = await createConnection('--platform', 'google_ads', ...Object.entries(values).map(([name, given]) => `${name}=${given}`));
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { [field]: [expect.any(String)] } });
    });

    it('accepts the longest account id and name', async () => {
      const run = await createConnection('--platform', 'google_ads', '--account-id', 'i'.repeat(64), '--account-name', 'é'.repeat(255));
      expect(run.code).toBe(0);
      expect(run.json).toMatchObject({ external_account_id: 'i'.repeat(64), account_name: 'é'.repeat(255) });
    });

    it('refuses an unknown customer with exit code 1 and inserts nothing', async () => {
      const run = await cli(
        'connection',
        'create',
        '--customer',
        '999999',
        '--platform',
        'google_ads',
        '--account-id',
        'ghost',
        '--account-name',
        'Ghost',
      );
      expect(run.code).toBe(1);
      expect(errorJson(run)).toMatchObject({ error: 'validation_error', errors: { customer: [expect.any(String)] } });
      expect(await database.dataSource.query("SELECT id FROM connections WHERE external_account_id = 'ghost'")).toEqual([]);
    });

    it.each(['tiktok_ads', 'Google_Ads', ''])('treats --platform "%s" as a usage error', async (platform) => {
      const run = await createConnection(`--platform=${platform}`, '--account-id', 'a', '--account-name', 'b');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--platform must be one of google_ads, meta_ads');
      expect(run.stderr).toContain(
        'usage: audience-admin connection create --customer ID --platform google_ads|meta_ads --account-id X --account-name N',
      );
    });

    it('treats a missing option as a usage error', async () => {
      const run = await createConnection('--platform', 'google_ads', '--account-id', 'a');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--account-name is required');
    });
  });

  it('lists every command of SPEC section 9 in --help', async () => {
    let stdout = '';
    const code = await runCli(['--help'], { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: () => true } }, env);
    expect(code).toBe(0);
    for (const line of [
      'audience-admin customer create --name N',
      'audience-admin user deactivate --email E',
      'audience-admin apikey create --customer ID --name N [--scope read|write] [--expires-in-days D]',
      'audience-admin apikey list --customer ID',
      'audience-admin apikey revoke ID',
      'audience-admin apikey rotate ID [--grace-hours H]',
      'audience-admin connection create --customer ID --platform google_ads|meta_ads --account-id X --account-name N',
      'audience-admin migrate',
    ]) {
      expect(stdout).toContain(`  ${line}\n`);
    }
  });

  describe('against a running server on the same database', () => {
    const AUDIENCES = '/api/v1/audiences/';
    const ME = '/api/v1/users/me/';
    let api: TestApp;
    let serverEnv: Record<string, string>;
    let customerId: number;

    function admin(...argv: string[]): Promise<Run> {
      return cliAgainst(serverEnv, argv);
    }

    async function adminKey(...extra: string[]): Promise<string> {
      const run = await admin('apikey', 'create', '--customer', String(customerId), '--name', 'Live', ...extra);
      expect(run.code).toBe(0);
      return run.json.key as string;
    }

    beforeAll(async () => {
      api = await startTestApp();
      serverEnv = { ...env, DATABASE_URL: api.databaseUrl };
      const customer = await admin('customer', 'create', '--name', 'Live Co');
      expect(customer.code).toBe(0);
      customerId = customer.json.id as number;
    });
    afterEach(() => api.clock.reset());
    afterAll(() => api.close());

    it('accepts a key the CLI created, and refuses it soon after the CLI revokes it', async () => {
      const created = await admin('apikey', 'create', '--customer', String(customerId), '--name', 'Live');
      const headers = apiKeyHeader(created.json.key as string);
      expect((await api.request(AUDIENCES, { headers })).status).toBe(200);
      expect((await api.request(AUDIENCES, { headers })).status).toBe(200);

      expect((await admin('apikey', 'revoke', String(created.json.id))).code).toBe(0);
      const revoked = await pollStatus(() => api.request(AUDIENCES, { headers }), 401);
      expect(revoked).toEqual({ status: 401, elapsedMs: expect.any(Number) });
      expect(revoked.elapsedMs).toBeLessThan(2000);
    });

    it('accepts both keys after a CLI rotation, and only the new one after the grace period', async () => {
      const oldKey = await adminKey();
      expect((await api.request(AUDIENCES, { headers: apiKeyHeader(oldKey) })).status).toBe(200);
      const list = await admin('apikey', 'list', '--customer', String(customerId));
      const oldId = (list.json.api_keys as Record<string, unknown>[]).at(-1)!.id;

      const rotated = await admin('apikey', 'rotate', String(oldId));
      expect(rotated.code).toBe(0);
      const newKey = rotated.json.key as string;
      expect((await api.request(AUDIENCES, { headers: apiKeyHeader(newKey) })).status).toBe(200);
      expect((await api.request(AUDIENCES, { headers: apiKeyHeader(oldKey) })).status).toBe(200);

      api.clock.advance(25 * HOUR_MS);
      const expired = await pollStatus(() => api.request(AUDIENCES, { headers: apiKeyHeader(oldKey) }), 401);
      expect(expired).toEqual({ status: 401, elapsedMs: expect.any(Number) });
      expect((await api.request(AUDIENCES, { headers: apiKeyHeader(newKey) })).status).toBe(200);
    });

    it('lets a CLI-created user log in, and refuses their token soon after the CLI deactivates them', async () => {
      const user = { email: 'live-user@example.com', password: 'correct horse battery staple' };
      const created = await admin('user', 'create', '--customer', String(customerId), '--email', user.email, '--password', user.password);
      expect(created.code).toBe(0);
      const { access } = await login(api, user);
      expect((await api.request(ME, { headers: bearer(access) })).status).toBe(200);
      expect((await api.request(ME, { headers: bearer(access) })).status).toBe(200);

      expect((await admin('user', 'deactivate', '--email', user.email)).code).toBe(0);
      const deactivated = await pollStatus(() => api.request(ME, { headers: bearer(access) }), 401);
      expect(deactivated).toEqual({ status: 401, elapsedMs: expect.any(Number) });
      expect(deactivated.elapsedMs).toBeLessThan(2000);
    });

    it('registers a connection that the server lists exactly as the CLI printed it', async () => {
      const run = await admin(
        'connection',
        'create',
        '--customer',
        String(customerId),
        '--platform',
        'google_ads',
        '--account-id',
        '555-000-1234',
        '--account-name',
        'Live Search',
      );
      expect(run.code).toBe(0);
      const response = await api.request('/api/v1/connections/', { headers: apiKeyHeader(await adminKey('--scope', 'read')) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { count: number; results: unknown[] };
      expect(body).toMatchObject({ count: 1, results: [run.json] });
    });
  });
});
