import 'reflect-metadata';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { generateApiKey } from '../src/api-keys/api-key-format.js';
import { SignalStatus } from '../src/signals/signal.entity.js';
import { PasswordHasher } from '../src/users/password-hasher.js';
import { openBenchDatabase } from './database.js';
import { BATCH_EXTERNAL_ID_PREFIX } from './scenarios.js';
import { note, ProgressBar } from './progress.js';
import { BENCH_PASSWORD, readSettings, type BenchSettings } from './settings.js';

/** One workspace to seed. The sizes are in the customer's name, so a size change seeds a new one. */
export interface WorkspacePlan {
  /** `main` (throughput scenarios) or `growth-<signals>`. */
  role: 'main' | 'growth';
  signals: number;
  audiences: number;
}

export interface SeededWorkspace extends WorkspacePlan {
  name: string;
  customerId: number;
  email: string;
}

/** Per workspace, besides signals and audiences: a handful of destinations and models, as a real account has. */
const CONNECTIONS_PER_WORKSPACE = 8;
const ACTIVE_CONNECTIONS = 5;
const MODELS_PER_WORKSPACE = 12;
/** Rows per INSERT … SELECT generate_series: big enough to be fast, small enough for a smooth progress bar. */
const BATCH = 25_000;
/** Signals created by the POST scenarios are named so, and removed before the next run. */
export const POSTED_NAME_PREFIX = 'bench-post ';
/** The events scenario's signal, made by each run (its name starts with POSTED_NAME_PREFIX, so the next run removes it and its events). */
export const EVENTS_SIGNAL_NAME = `${POSTED_NAME_PREFIX}events`;

export function workspacePlans(settings: BenchSettings): WorkspacePlan[] {
  return [
    { role: 'main', signals: settings.mainSignals, audiences: settings.mainAudiences },
    ...settings.growthSizes.map((signals) => ({ role: 'growth' as const, signals, audiences: 100 })),
  ];
}

export function workspaceName(plan: WorkspacePlan): string {
  return plan.role === 'main' ? `bench main ${plan.signals}s ${plan.audiences}a` : `bench growth ${plan.signals}s`;
}

function emailOf(plan: WorkspacePlan): string {
  return plan.role === 'main' ? `bench-main-${plan.signals}-${plan.audiences}@bench.example` : `bench-growth-${plan.signals}@bench.example`;
}

/**
 * Seeds the workspaces that are not there yet, each in one transaction (an interrupted seed leaves
 * nothing half-done, so "the customer exists" means "it is complete"), then VACUUM ANALYZE so the
 * planner has statistics and index-only scans can use the visibility map, as on a settled database.
 */
export async function seed(pool: pg.Pool, plans: WorkspacePlan[], options: { reseed?: boolean } = {}): Promise<SeededWorkspace[]> {
  if (options.reseed) {
    note('BENCH_RESEED: removing every bench workspace');
    // A dedicated database: nothing but bench data lives here.
    await pool.query('TRUNCATE customers, users, auth_sessions, api_keys, mcp_tokens RESTART IDENTITY CASCADE');
  }
  const passwordHash = await new PasswordHasher().hash(BENCH_PASSWORD);
  const seeded: SeededWorkspace[] = [];
  let wrote = false;
  for (const plan of plans) {
    const name = workspaceName(plan);
    const existing = await pool.query<{ id: number }>('SELECT id FROM customers WHERE name = $1', [name]);
    if (existing.rows[0]) {
      seeded.push({ ...plan, name, customerId: existing.rows[0].id, email: emailOf(plan) });
      continue;
    }
    seeded.push(await seedWorkspace(pool, plan, passwordHash));
    wrote = true;
  }
  if (wrote) {
    note('VACUUM ANALYZE');
    await pool.query('VACUUM (ANALYZE) customers, users, connections, ai_model_instances, audiences, audience_connections, signals');
  }
  return seeded;
}

async function seedWorkspace(pool: pg.Pool, plan: WorkspacePlan, passwordHash: string): Promise<SeededWorkspace> {
  const name = workspaceName(plan);
  const email = emailOf(plan);
  const bar = new ProgressBar(`seed ${name.padEnd(28)}`, plan.signals + plan.audiences);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Bulk load: nothing is lost if the machine crashes mid-seed that a re-run would not redo.
    await client.query('SET LOCAL synchronous_commit = off');
    const customerId = (await client.query<{ id: number }>('INSERT INTO customers (name) VALUES ($1) RETURNING id', [name])).rows[0]!.id;
    const userId = (
      await client.query<{ id: number }>(
        `INSERT INTO users (customer_id, email, password_hash, role) VALUES ($1, $2, $3, 'admin') RETURNING id`,
        [customerId, email, passwordHash],
      )
    ).rows[0]!.id;

    // Destinations: the first ACTIVE_CONNECTIONS are active (active signals point at those), the rest
    // expired, revoked or in error, as in an account that has been around for a while.
    const connections = await client.query<{ id: number; status: string }>(
      `INSERT INTO connections (customer_id, platform, external_account_id, account_name, status, scopes, connected_by, token_expires_at, last_refreshed_at)
       SELECT $1,
              CASE WHEN i % 2 = 0 THEN 'google_ads' ELSE 'meta_ads' END,
              'acct-' || lpad(i::text, 10, '0'),
              CASE WHEN i % 2 = 0 THEN 'Google Ads account ' ELSE 'Meta ad account ' END || i,
              CASE WHEN i <= $3 THEN 'active' ELSE (ARRAY['expired', 'revoked', 'error'])[1 + i % 3] END,
              CASE WHEN i % 2 = 0 THEN ARRAY['https://www.googleapis.com/auth/adwords'] ELSE ARRAY['ads_management', 'ads_read'] END,
              $4, now() + interval '1 hour', now() - interval '10 minutes'
         FROM generate_series(1, $2::int) AS i
       RETURNING id, status`,
      [customerId, CONNECTIONS_PER_WORKSPACE, ACTIVE_CONNECTIONS, userId],
    );
    const connectionIds = connections.rows.map((row) => row.id);
    const activeConnectionIds = connections.rows.filter((row) => row.status === 'active').map((row) => row.id);

    const models = await client.query<{ id: number }>(
      `INSERT INTO ai_model_instances (customer_id, name, model_type, base_model, parameters, status, metrics, version)
       SELECT $1,
              'Model ' || i,
              (ARRAY['propensity', 'lifetime_value', 'churn', 'lookalike'])[1 + i % 4],
              (ARRAY['gbm-v3', 'gbm-v4', 'dnn-v1'])[1 + i % 3],
              jsonb_build_object('max_depth', 4 + i % 5, 'learning_rate', 0.05, 'features', jsonb_build_array('recency', 'frequency', 'monetary')),
              CASE WHEN i % 6 = 0 THEN 'training' WHEN i % 11 = 0 THEN 'failed' ELSE 'ready' END,
              jsonb_build_object('auc', round((0.7 + (i % 20) / 100.0)::numeric, 3), 'trained_rows', 100000 * i),
              1 + i % 4
         FROM generate_series(1, $2::int) AS i
       RETURNING id`,
      [customerId, MODELS_PER_WORKSPACE],
    );
    const modelIds = models.rows.map((row) => row.id);

    for (let from = 1; from <= plan.audiences; from += BATCH) {
      const to = Math.min(plan.audiences, from + BATCH - 1);
      await client.query(INSERT_AUDIENCES, [customerId, from, to, plan.audiences, modelIds]);
      bar.tick(to - from + 1);
    }
    // 0 to 3 destinations per audience, picked pseudo-randomly but reproducibly.
    await client.query(
      `INSERT INTO audience_connections (customer_id, audience_id, connection_id)
       SELECT a.customer_id, a.id, c.id
         FROM audiences a
         CROSS JOIN LATERAL (
           SELECT id FROM connections c
            WHERE c.customer_id = a.customer_id
            ORDER BY hashint4((a.id * 31 + c.id)::int)
            LIMIT (hashint4(a.id::int)::bigint & 2147483647) % 4
         ) c
        WHERE a.customer_id = $1`,
      [customerId],
    );
    const audienceIds = (
      await client.query<{ id: number }>('SELECT id FROM audiences WHERE customer_id = $1 ORDER BY id', [customerId])
    ).rows.map((row) => row.id);

    for (let from = 1; from <= plan.signals; from += BATCH) {
      const to = Math.min(plan.signals, from + BATCH - 1);
      await client.query(INSERT_SIGNALS, [customerId, from, to, plan.signals, modelIds, audienceIds, connectionIds, activeConnectionIds]);
      bar.tick(to - from + 1);
    }
    await client.query('COMMIT');
    bar.finish();
    return { ...plan, name, customerId, email };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Pseudo-random but reproducible attributes from hashint4(g): h1..h3 are independent values in
 * 0..999. Audiences: half rule-based, 30% model-based (with a model and a min_score, as the
 * service requires), 20% uploads; 60% active, 30% draft, 10% archived.
 */
const INSERT_AUDIENCES = `
  INSERT INTO audiences (customer_id, created_at, updated_at, name, description, source_type, rules, model_instance_id, min_score, status, size)
  SELECT $1, t.created, least(now(), t.created + h.h2 * interval '1 minute'),
         'Audience ' || lpad(g::text, 7, '0') || ' ' || (ARRAY['high value', 'lapsed buyers', 'cart abandoners', 'newsletter', 'lookalike', 'app users'])[1 + h.h1 % 6],
         CASE WHEN h.h3 % 3 = 0 THEN '' ELSE 'Seeded audience ' || g || ', refreshed daily from the CRM export.' END,
         t.source_type,
         CASE WHEN t.source_type = 'rules' THEN jsonb_build_object('all', jsonb_build_array(
                jsonb_build_object('field', 'country', 'op', 'in', 'value', jsonb_build_array('US', 'CA', 'GB')),
                jsonb_build_object('field', 'purchases_90d', 'op', 'gte', 'value', 1 + h.h2 % 5)))
              ELSE '{}'::jsonb END,
         CASE WHEN t.source_type = 'model' THEN ($5::int[])[1 + h.h2 % cardinality($5::int[])] END,
         CASE WHEN t.source_type = 'model' THEN round(h.h3 / 1000.0, 2)::float8 END,
         t.status,
         CASE WHEN t.status = 'draft' THEN NULL ELSE 1000 + h.h2 * 4999 END
    FROM generate_series($2::int, $3::int) AS g
    CROSS JOIN LATERAL (SELECT (hashint4(g)::bigint & 2147483647) % 1000 AS h1,
                               (hashint4(g + 7919)::bigint & 2147483647) % 1000 AS h2,
                               (hashint4(g + 104729)::bigint & 2147483647) % 1000 AS h3) AS h
    CROSS JOIN LATERAL (SELECT CASE WHEN h.h1 < 500 THEN 'rules' WHEN h.h1 < 800 THEN 'model' ELSE 'upload' END AS source_type,
                               CASE WHEN h.h3 < 600 THEN 'active' WHEN h.h3 < 900 THEN 'draft' ELSE 'archived' END AS status,
                               now() - ($4::int - g + 1) * interval '17 minutes' AS created) AS t
   ORDER BY g`;

/**
 * Signals: status 20% draft, 45% active, 15% paused, 5% failed, 15% archived; type 50% conversion,
 * 30% value, 20% score. Active signals always point at an active connection (the service's rule);
 * score signals always have a model; 60% name an audience. Config is shaped by type, ~100-150 bytes.
 * created_at grows with the id, one every 30 seconds back from now.
 */
const INSERT_SIGNALS = `
  INSERT INTO signals (customer_id, created_at, updated_at, name, description, signal_type, status, model_instance_id, audience_id, connection_id, config)
  SELECT $1, t.created, least(now(), t.created + h.h2 * interval '1 minute'),
         'Signal ' || g || ' ' || (ARRAY['purchase', 'lead', 'signup', 'add to cart', 'subscription', 'app install'])[1 + h.h1 % 6],
         CASE WHEN h.h3 % 4 = 0 THEN '' ELSE 'Seeded ' || t.signal_type || ' signal ' || g || ', sent hourly.' END,
         t.signal_type,
         t.status,
         CASE WHEN t.signal_type = 'score' OR h.h3 % 3 = 0 THEN ($5::int[])[1 + h.h2 % cardinality($5::int[])] END,
         CASE WHEN cardinality($6::int[]) > 0 AND h.h2 % 5 < 3 THEN ($6::int[])[1 + (h.h1 * 1000 + h.h3) % cardinality($6::int[])] END,
         CASE WHEN t.status = 1 THEN ($8::int[])[1 + h.h3 % cardinality($8::int[])]
              WHEN h.h2 % 2 = 0 THEN ($7::int[])[1 + h.h3 % cardinality($7::int[])] END,
         CASE t.signal_type
           WHEN 'conversion' THEN jsonb_build_object('conversion_action', (ARRAY['purchase', 'lead', 'signup', 'add_to_cart'])[1 + h.h2 % 4],
                                                     'lookback_days', (ARRAY[7, 14, 30, 90])[1 + h.h3 % 4], 'attribution', 'last_click')
           WHEN 'value' THEN jsonb_build_object('currency', (ARRAY['USD', 'EUR', 'GBP'])[1 + h.h2 % 3], 'value_field', 'order_total',
                                                'lookback_days', (ARRAY[7, 14, 30, 90])[1 + h.h3 % 4])
           ELSE jsonb_build_object('threshold', round(h.h2 / 1000.0, 2), 'refresh', 'daily', 'deciles', jsonb_build_array(1, 2, 3))
         END
    FROM generate_series($2::int, $3::int) AS g
    CROSS JOIN LATERAL (SELECT (hashint4(g)::bigint & 2147483647) % 1000 AS h1,
                               (hashint4(g + 7919)::bigint & 2147483647) % 1000 AS h2,
                               (hashint4(g + 104729)::bigint & 2147483647) % 1000 AS h3) AS h
    CROSS JOIN LATERAL (SELECT CASE WHEN h.h1 < 200 THEN 0 WHEN h.h1 < 650 THEN 1 WHEN h.h1 < 800 THEN 2 WHEN h.h1 < 850 THEN 3 ELSE 4 END::smallint AS status,
                               CASE WHEN h.h2 < 500 THEN 'conversion' WHEN h.h2 < 800 THEN 'value' ELSE 'score' END AS signal_type,
                               now() - ($4::int - g + 1) * interval '30 seconds' AS created) AS t
   ORDER BY g`;

/**
 * Per run: signals left by earlier POST scenarios are removed (so every run starts from the seeded
 * sizes), and each workspace gets a fresh API key. A key is shown only once, so it cannot be kept
 * from the seed; the previous run's bench keys are deleted.
 */
export async function prepareRun(pool: pg.Pool, workspaces: SeededWorkspace[]): Promise<Map<number, string>> {
  const removed = await pool.query(`DELETE FROM signals WHERE name LIKE $1`, [`${POSTED_NAME_PREFIX}%`]);
  if ((removed.rowCount ?? 0) > 0) {
    note(`removed ${removed.rowCount} signals created by an earlier run; VACUUM ANALYZE signals`);
    await pool.query('VACUUM (ANALYZE) signals');
  }
  // The people batches of earlier runs, and their recompute, still waiting (MEMBERSHIP_DEBOUNCE_SECONDS is an hour in a run).
  const people = await pool.query(`DELETE FROM people WHERE external_id LIKE $1`, [`${BATCH_EXTERNAL_ID_PREFIX}%`]);
  if ((people.rowCount ?? 0) > 0) {
    note(`removed ${people.rowCount} people written by an earlier run; VACUUM ANALYZE people`);
    await pool.query('VACUUM (ANALYZE) people');
  }
  // Every job an earlier run left queued (a recompute waiting out its hour, syncs cut short when
  // that run's service stopped) is removed, so this run's service does none of it while it is measured.
  await pool.query(
    'SELECT graphile_worker.force_unlock_workers(ARRAY(SELECT DISTINCT locked_by FROM graphile_worker.jobs WHERE locked_by IS NOT NULL))',
  );
  const { rows } = await pool.query<{ jobs: number }>(
    'SELECT count(*)::int AS jobs FROM graphile_worker.complete_jobs(ARRAY(SELECT id FROM graphile_worker.jobs))',
  );
  if (rows[0]!.jobs > 0) note(`removed ${rows[0]!.jobs} jobs an earlier run left queued`);
  // The signal the events scenario posts to: paused, so its events are held and no delivery runs;
  // with a Google Ads destination when the workspace has one, so each event is checked as Google's.
  const main = workspaces.find((workspace) => workspace.role === 'main')!;
  await pool.query(
    `INSERT INTO signals (customer_id, name, description, signal_type, status, connection_id, config)
     VALUES ($1, $2, 'The events scenario posts here.', 'conversion', $3,
       (SELECT id FROM connections WHERE customer_id = $1 AND platform = 'google_ads' ORDER BY id LIMIT 1), '{}')`,
    [main.customerId, EVENTS_SIGNAL_NAME, SignalStatus.paused],
  );
  const keys = new Map<number, string>();
  for (const workspace of workspaces) {
    await pool.query(`DELETE FROM api_keys WHERE customer_id = $1 AND name = 'bench'`, [workspace.customerId]);
    const generated = generateApiKey();
    await pool.query(`INSERT INTO api_keys (customer_id, name, prefix, key_hash, scope) VALUES ($1, 'bench', $2, $3, 'write')`, [
      workspace.customerId,
      generated.prefix,
      generated.hash,
    ]);
    keys.set(workspace.customerId, generated.key);
  }
  return keys;
}

/** `node dist/bench/seed.js`: seed only (same settings as the run), e.g. to time the seed on its own. */
async function main(): Promise<void> {
  const settings = readSettings();
  const database = await openBenchDatabase(settings.dataDir);
  const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: 'bench-seed' });
  try {
    const workspaces = await seed(pool, workspacePlans(settings), { reseed: settings.reseed });
    for (const workspace of workspaces) note(`${workspace.name}: customer ${workspace.customerId}, ${workspace.email}`);
  } finally {
    await pool.end();
    await database.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
