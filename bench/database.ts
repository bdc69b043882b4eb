import pg from 'pg';
import { openDatabase } from '../src/database/database.js';
import { note } from './progress.js';

/** The benchmark's own database, migrated, and how to let go of it. */
export interface BenchDatabase {
  url: string;
  /** "embedded (bench/.data)" or "DATABASE_URL server, database audience_bench". */
  description: string;
  close(): Promise<void>;
}

export const BENCH_DATABASE_NAME = 'audience_bench';

/**
 * DATABASE_URL set: a dedicated database `audience_bench` on that server (created when missing),
 * so the developer's database is never touched. Unset: an embedded PostgreSQL cluster of its own
 * under `dataDir` (bench/.data), never the developer's .data/. Either way the schema comes from the
 * service's own migrations (openDatabase), so the seed writes through the real schema.
 */
export async function openBenchDatabase(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<BenchDatabase> {
  const serverUrl = env.DATABASE_URL?.trim();
  if (serverUrl) {
    const url = new URL(serverUrl);
    url.pathname = `/${BENCH_DATABASE_NAME}`;
    await createDatabaseIfMissing(serverUrl, BENCH_DATABASE_NAME);
    const database = await openDatabase(
      { databaseUrl: url.toString(), dataDir, databasePoolSize: 2 },
      { applicationName: 'bench-migrate' },
    );
    // Migrations done; the seed and the servers use their own pools.
    await database.dataSource.destroy();
    return { url: url.toString(), description: `DATABASE_URL server, database ${BENCH_DATABASE_NAME}`, close: async () => {} };
  }
  const database = await openDatabase(
    { databaseUrl: undefined, dataDir, databasePoolSize: 2 },
    { applicationName: 'bench-migrate', log: (line) => note(line) },
  );
  await database.dataSource.destroy();
  const embedded = database.embedded!;
  return {
    url: embedded.url,
    description: `embedded PostgreSQL (${dataDir})`,
    // database.close() stops the cluster only if this process started it.
    close: () => database.close(),
  };
}

/** `name` must be a plain identifier (it is spliced into CREATE DATABASE). */
export async function createDatabaseIfMissing(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: 'bench-setup' });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      note(`creating database ${name}`);
      await client.query(`CREATE DATABASE ${name}`);
    }
  } finally {
    await client.end();
  }
}
