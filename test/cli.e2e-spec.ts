import { runCli } from '../src/cli/commands.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

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

  async function cli(...argv: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      argv,
      { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) } },
      env,
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

    it.each(['abc', '0', '-1', '1.5', '99999999999'])('treats --customer %s as a usage error', async (value) => {
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
});
