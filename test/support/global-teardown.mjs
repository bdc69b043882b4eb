import pg from 'pg';

// Drops every database this run made (test files drop their own; this sweeps up after crashes),
// then stops the embedded cluster if global setup started one.
export default async function globalTeardown() {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL;
  const runId = process.env.TEST_RUN_ID;
  if (adminUrl && runId) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`asp_%_${runId}%`]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.end();
  }
  await globalThis.embeddedTestCluster?.stop();
}
