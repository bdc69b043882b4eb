import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { adminDatabaseUrl, databaseUrl } from './support/test-database.js';

/**
 * SPEC section 9: several replicas starting at once on an empty database must not collide. Before
 * the migration lock, two starts both created the first tables and one crashed.
 */
const ROOT = new URL('../', import.meta.url);

function startMigrating(url: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', './test/support/ts-loader.mjs', 'test/support/migrate-process.ts'], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('several processes starting at once on an empty database', () => {
  const name = `asp_empty_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl() });

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('all start: one applies the migrations and the job schema, the others wait and find nothing to do', async () => {
    const url = databaseUrl(name);
    const results = await Promise.all([startMigrating(url), startMigrating(url), startMigrating(url)]);
    for (const result of results) expect(result).toEqual({ code: 0, output: 'migrated\n' });

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const migrations = await client.query(
        'SELECT name, count(*)::int AS times FROM typeorm_migrations GROUP BY name HAVING count(*) > 1',
      );
      expect(migrations.rows).toEqual([]);
      const total = await client.query('SELECT count(*)::int AS count FROM typeorm_migrations');
      expect(total.rows[0].count).toBeGreaterThan(0);
      const jobSchema = await client.query('SELECT count(*)::int AS count FROM graphile_worker.migrations');
      expect(jobSchema.rows[0].count).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });
});
