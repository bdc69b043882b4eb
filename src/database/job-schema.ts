import { runMigrations } from 'graphile-worker';

/**
 * Installs or upgrades the job library's own schema (graphile-worker, schema `graphile_worker`).
 * It ships its migrations with the package version, so it runs at every start, after ours and
 * under the same lock (migration-lock.ts): on its own, two processes installing it at once on an
 * empty database collide (measured: 1 start in 12 failed on `pg_namespace_nspname_index`).
 */
export async function installJobSchema(url: string): Promise<void> {
  await runMigrations({ connectionString: url, logger: undefined, maxPoolSize: 1 });
}
