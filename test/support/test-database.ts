import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ENTITIES } from '../../orm-entities.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { installJobSchema } from '../../src/database/job-schema.js';

export interface TestDatabase {
  url: string;
  dataSource: DataSource;
  drop(): Promise<void>;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest (its global setup prepares the database).`);
  return value;
}

export function adminDatabaseUrl(): string {
  return required('TEST_ADMIN_DATABASE_URL');
}

export function databaseUrl(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminDatabaseUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The run's migrated template database, built by whichever test file gets there first (an
 * advisory lock keeps the others waiting). Cloning it (CREATE DATABASE … TEMPLATE) gives every
 * test file a schema of its own in a few milliseconds.
 */
async function templateDatabase(): Promise<string> {
  const template = `asp_template_${required('TEST_RUN_ID')}`;
  await withAdmin(async (client) => {
    await client.query('SELECT pg_advisory_lock(4242)');
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount) return;
      await client.query(`CREATE DATABASE ${template}`);
      const dataSource = new DataSource(dataSourceOptions({ url: databaseUrl(template), poolSize: 1 }));
      await dataSource.initialize();
      await dataSource.runMigrations();
      await dataSource.destroy();
      await installJobSchema(databaseUrl(template));
    } finally {
      await client.query('SELECT pg_advisory_unlock(4242)');
    }
  });
  return template;
}

/** A fresh, migrated database of this test file's own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await templateDatabase();
  const name = `asp_test_${required('TEST_RUN_ID')}_${randomBytes(4).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = databaseUrl(name);
  const dataSource = new DataSource(dataSourceOptions({ url, poolSize: 5, applicationName: 'audience-platform-test', entities: ENTITIES }));
  await dataSource.initialize();
  return {
    url,
    dataSource,
    async drop() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
