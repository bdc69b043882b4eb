import pg from 'pg';

/** The advisory lock all schema changes take (two-key form): "migr" in ASCII, 0. */
export const MIGRATION_LOCK_KEY: readonly [number, number] = [0x6d696772, 0];

/**
 * Runs `work` while holding a session advisory lock on its own connection, so that of several
 * replicas starting at once on an empty database exactly one migrates and the others wait, then
 * find nothing left to apply (SPEC section 9). Without it two starts both try to create the first
 * tables and one crashes. A crashed holder's lock goes with its session.
 */
export async function withMigrationLock<T>(url: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'audience-platform-migration-lock' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK_KEY]);
    return await work();
  } finally {
    // Ending the session releases the lock, even when the unlock itself cannot be sent.
    await client.end().catch(() => undefined);
  }
}
