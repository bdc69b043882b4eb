import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { TokenCipher } from '../src/connections/token-cipher.js';
import { DIFF_SQL } from '../src/syncs/sync-members.repository.js';
import { startBenchPlatforms } from './fake-platforms.js';
import { cli, freshDatabase, log, waitForHealth } from './scenario-service.js';
import { DEPLOYED_NODE_ARGS } from './settings.js';

/**
 * `npm run build && node dist/bench/syncs.js [--members N]` with DATABASE_URL set to a PostgreSQL
 * server (a database `audience_bench_syncs` is created afresh there): N members (default
 * 1,000,000) of an active audience with a Google and a Meta destination, each person with an
 * email (and a third a phone) hashed in both platforms' forms and 2% with consent denied; then,
 * through `npm start`'s process against local platforms that answer at once (bench/fake-platforms.ts):
 * the first sync to each destination, one after the other, and the same after 5% churn (2.5% leave,
 * 2.5% join). Reports
 * each run's wall time from the POST to its end, its counts, and the plans of the diff's
 * statements after the churn. Rate budgets are raised so that the platforms' quotas do not set
 * the pace. Not a test: the figures depend on the machine and its neighbours.
 */

const DATABASE_NAME = 'audience_bench_syncs';
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');

interface Run {
  id: number;
  connection: number;
  status: string;
  planned_add: number | null;
  planned_remove: number | null;
  added: number;
  removed: number;
  failed: number;
  skipped_consent: number;
  skipped_unmatchable: number;
  match_rate: number | null;
}

/** People, their hashes in both forms, the connections with their (encrypted) grants and an active audience of the first `members`, by SQL. */
async function seed(url: string, customerId: number, members: number): Promise<{ audience: number; google: number; meta: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const people = Math.round(members * 1.05);
  await client.query(
    `INSERT INTO people (customer_id, external_id, consent_ad_user_data, matched_keys)
     SELECT $1, 'p-' || i, CASE WHEN i % 50 = 0 THEN 'denied' ELSE 'granted' END,
            CASE WHEN i % 3 = 0 THEN ARRAY['email', 'phone'] ELSE ARRAY['email'] END
       FROM generate_series(1, $2::int) AS i`,
    [customerId, people],
  );
  // Packed as src/people/person-identifiers.ts packs them: the email (kind byte 1), then for every third person the phone (2).
  const packed = (platform: string) =>
    `'\\x01'::bytea || sha256(convert_to('${platform}email' || id, 'UTF8'))
       || CASE WHEN id % 3 = 0 THEN '\\x02'::bytea || sha256(convert_to('${platform}phone' || id, 'UTF8')) ELSE ''::bytea END`;
  await client.query(
    `UPDATE people SET google_identifiers = ${packed('google')}, meta_identifiers = ${packed('meta')} WHERE customer_id = $1`,
    [customerId],
  );
  const cipher = new TokenCipher(Buffer.from(ENCRYPTION_KEY, 'base64'));
  const connection = async (platform: string, account: string, scopes: string[]) =>
    Number(
      (
        await client.query<{ id: string }>(
          `INSERT INTO connections (customer_id, platform, external_account_id, account_name, status, scopes, customer_match_terms_accepted, access_token_encrypted)
           VALUES ($1, $2, $3, $3, 'active', $4, $5, $6) RETURNING id`,
          [customerId, platform, account, scopes, platform === 'google_ads', cipher.encrypt('bench-token')],
        )
      ).rows[0]!.id,
    );
  const google = await connection('google_ads', '1234567890', [
    'https://www.googleapis.com/auth/adwords',
    'https://www.googleapis.com/auth/datamanager',
  ]);
  const meta = await connection('meta_ads', '555000333', ['ads_management', 'ads_read']);
  const audience = Number(
    (
      await client.query<{ id: string }>(
        `INSERT INTO audiences (customer_id, name, source_type, status, size) VALUES ($1, 'bench sync', 'upload', 'active', $2) RETURNING id`,
        [customerId, members],
      )
    ).rows[0]!.id,
  );
  await client.query(`INSERT INTO audience_connections (customer_id, audience_id, connection_id) VALUES ($1, $2, $3), ($1, $2, $4)`, [
    customerId,
    audience,
    google,
    meta,
  ]);
  await client.query(
    `INSERT INTO audience_members (customer_id, audience_id, person_id)
     SELECT $1, $2, id FROM people WHERE customer_id = $1 ORDER BY id LIMIT $3`,
    [customerId, audience, members],
  );
  for (const table of ['people', 'audience_members']) await client.query(`VACUUM ANALYZE ${table}`);
  await client.end();
  return { audience, google, meta };
}

/** 2.5% of the members leave and as many people join, as an upload would do it. */
async function churn(url: string, customerId: number, audience: number, members: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('DELETE FROM audience_members WHERE customer_id = $1 AND audience_id = $2 AND person_id % 40 = 0', [
    customerId,
    audience,
  ]);
  await client.query(
    `INSERT INTO audience_members (customer_id, audience_id, person_id)
     SELECT $1, $2, id FROM people WHERE customer_id = $1 AND id > (SELECT min(id) + $3 - 1 FROM people WHERE customer_id = $1)
      ORDER BY id LIMIT $4`,
    [customerId, audience, members, Math.round(members / 40)],
  );
  await client.end();
}

async function plans(url: string, customerId: number, audience: number, connection: number): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const result: Record<string, string[]> = {};
  const parameters = [customerId, audience, connection, 'google'];
  // The plan, as the service runs it (nested loops off); then its first page of each kind, read by id.
  await client.query('BEGIN');
  await client.query('SET LOCAL enable_nestloop = off');
  const explained = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${DIFF_SQL.plan}`, parameters);
  result.plan = explained.rows.map((row) => row['QUERY PLAN']);
  const planned = await client.query<{ newIds: string[]; changedIds: string[]; removeIds: string[] }>(DIFF_SQL.plan, parameters);
  await client.query('ROLLBACK');
  const { newIds, changedIds, removeIds } = planned.rows[0]!;
  const addIds = [...newIds, ...changedIds];
  for (const [name, sql, values] of [
    ['to_send_first_page', DIFF_SQL.toSend, [...parameters, addIds.slice(0, 10_000)]],
    ['to_remove_first_page', DIFF_SQL.toRemove, [customerId, audience, connection, removeIds.slice(0, 10_000)]],
  ] as const) {
    const page = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [...values]);
    result[name] = page.rows.map((row) => row['QUERY PLAN']);
  }
  await client.end();
  return result;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { members: { type: 'string', default: '1000000' }, port: { type: 'string', default: '3112' } } });
  const members = Number(values.members);
  const port = Number(values.port);
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error(`set DATABASE_URL to a PostgreSQL server; a database ${DATABASE_NAME} is created there`);
  const url = await freshDatabase(serverUrl, DATABASE_NAME);
  const platforms = await startBenchPlatforms();
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DEMO_WORKSPACE: 'false',
    ENCRYPTION_KEY,
    WORKER_CONCURRENCY: '2',
    JOB_POLL_INTERVAL_MS: '100',
    RATE_LIMIT_PER_MINUTE: '100000',
    GOOGLE_DATA_MANAGER_URL: platforms.url,
    META_GRAPH_URL: `${platforms.url}/v25.0`,
    GOOGLE_REQUESTS_PER_MINUTE: '1000000',
    META_REQUESTS_PER_MINUTE: '1000000',
    GOOGLE_STATUS_POLL_DELAY_SECONDS: '0.5',
    GOOGLE_STATUS_POLL_BACKOFF_SECONDS: '0.5',
    SYNC_DEBOUNCE_SECONDS: '86400',
    SYNC_INTERVAL_HOURS: '0',
    MEMBERSHIP_REFRESH_MINUTES: '0',
  };
  const customer = cli(env, 'customer', 'create', '--name', 'bench syncs');
  const customerId = Number(customer.id);
  const key = cli(env, 'apikey', 'create', '--customer', String(customerId), '--name', 'bench', '--scope', 'write').key as string;
  log(`seeding ${members} members…`);
  const { audience, google, meta } = await seed(url, customerId, members);

  const server = spawn(process.execPath, [...DEPLOYED_NODE_ARGS, 'dist/src/main.js'], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const headers = { authorization: `Api-Key ${key}`, 'content-type': 'application/json' };
  const request = async (method: string, path: string, body?: unknown) =>
    (await (
      await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    ).json()) as {
      runs: Run[];
    } & Run;
  /** Syncs one destination after the other (each run alone on the machine), each with its wall time from the POST to its end. */
  const syncEach = async () => {
    const finished = [];
    for (const [platform, connection] of [
      ['google', google],
      ['meta', meta],
    ] as const) {
      const started = performance.now();
      const { runs } = await request('POST', '/api/v1/syncs/', { audience, connection });
      for (;;) {
        const current = await request('GET', `/api/v1/syncs/${runs[0]!.id}/`);
        if (['succeeded', 'partially_failed', 'failed', 'cancelled'].includes(current.status)) {
          finished.push({ platform, seconds: Number(((performance.now() - started) / 1000).toFixed(2)), ...current });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return finished;
  };
  try {
    await waitForHealth(port);
    log('first sync of each destination…');
    const first = await syncEach();
    log(`first: ${JSON.stringify(first.map(({ platform, seconds, added, status }) => ({ platform, seconds, added, status })))}`);
    await churn(url, customerId, audience, members);
    // The diff's plans with the churn waiting to be sent (EXPLAIN ANALYZE only reads).
    const diffPlans = await plans(url, customerId, audience, google);
    log('sync after 5% churn…');
    const second = await syncEach();
    log(
      `churn: ${JSON.stringify(second.map(({ platform, seconds, added, removed, status }) => ({ platform, seconds, added, removed, status })))}`,
    );
    const result = {
      members,
      first_sync: first,
      five_percent_churn_sync: second,
      platform_counts: platforms.counts,
      diff_plans_after_churn: diffPlans,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await platforms.close();
  }
}

await main();
