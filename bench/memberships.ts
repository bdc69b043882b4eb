import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { compileRules } from '../src/audiences/rules/rules-sql.js';
import type { RuleNode } from '../src/audiences/rules/audience-rules.js';
import { MembershipsRepository } from '../src/memberships/memberships.repository.js';
import { cli, freshDatabase, log, waitForHealth } from './scenario-service.js';
import { DEPLOYED_NODE_ARGS } from './settings.js';

/**
 * `npm run build && node dist/bench/memberships.js [--people N]` with DATABASE_URL set to a
 * PostgreSQL server (a database `audience_bench_members` is created afresh there): N people
 * (default 1,000,000) with traits and consent, and a ready model's scores for each, then through
 * `npm start`'s process: the first recompute of a rules audience and of a model audience, a
 * recompute with nothing changed, and one after 5% of the people changed (SPEC 10.2). Reports
 * each recompute's time as the service logs it, and the plans of the rules selection. Not a test:
 * the figures depend on the machine and its neighbours.
 */

const DATABASE_NAME = 'audience_bench_members';
const RULES: RuleNode = {
  any: [
    { trait: 'plan', op: 'eq', value: 'plan-1' },
    {
      all: [
        { trait: 'ltv', op: 'gte', value: 500 },
        { consent: 'ad_personalization', op: 'neq', value: 'denied' },
      ],
    },
  ],
};

/** People with a plan, a lifetime value and mixed consent, and a ready model's score for each, written by SQL (the setup, not the measure). */
async function seed(url: string, customerId: number, people: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `INSERT INTO people (customer_id, external_id, traits, consent_ad_personalization)
     SELECT $1, 'p-' || i, jsonb_build_object('plan', 'plan-' || (i % 5), 'ltv', (i::bigint * 7919) % 1000, 'vip', i % 2 = 0),
            (ARRAY['granted', 'denied', 'unspecified'])[1 + i % 3]
       FROM generate_series(1, $2::int) AS i`,
    [customerId, people],
  );
  const model = await client.query<{ id: string }>(
    `INSERT INTO ai_model_instances (customer_id, name, model_type, base_model, status, version)
     VALUES ($1, 'bench model', 'propensity', 'gbm-v3', 'ready', 1) RETURNING id`,
    [customerId],
  );
  const modelId = Number(model.rows[0]!.id);
  await client.query(
    `INSERT INTO model_scores (customer_id, model_instance_id, person_id, version, score)
     SELECT $1, $2, p.id, 1, ((p.id * 104729) % 1000) / 1000.0 FROM people p WHERE p.customer_id = $1`,
    [customerId, modelId],
  );
  await client.query('VACUUM ANALYZE people');
  await client.query('VACUUM ANALYZE model_scores');
  await client.end();
  return modelId;
}

async function plans(url: string, customerId: number): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const compiled = compileRules(RULES, 3);
  const wanted = MembershipsRepository.rulesWanted(compiled.sql, compiled.parameters);
  // The selection is the service's own text; it does not read the audience id ($2), so the rules' parameters move down one.
  const sql = wanted.sql.replace(/\$(\d+)/g, (_, n: string) => (n === '1' ? '$1' : `$${Number(n) - 1}`));
  const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [customerId, ...wanted.parameters]);
  await client.end();
  return result.rows.map((row) => row['QUERY PLAN']).join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { people: { type: 'string', default: '1000000' }, port: { type: 'string', default: '3111' } } });
  const people = Number(values.people);
  const port = Number(values.port);
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error(`set DATABASE_URL to a PostgreSQL server; a database ${DATABASE_NAME} is created there`);
  const url = await freshDatabase(serverUrl, DATABASE_NAME);
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DEMO_WORKSPACE: 'false',
    WORKER_CONCURRENCY: '1',
    MEMBERSHIP_DEBOUNCE_SECONDS: '0',
    JOB_POLL_INTERVAL_MS: '100',
    RATE_LIMIT_PER_MINUTE: '100000',
  };
  const customer = cli(env, 'customer', 'create', '--name', 'bench members');
  const customerId = Number(customer.id);
  const key = cli(env, 'apikey', 'create', '--customer', String(customerId), '--name', 'bench', '--scope', 'write').key as string;
  log(`seeding ${people} people and scores…`);
  const modelId = await seed(url, customerId, people);

  const server = spawn(process.execPath, [...DEPLOYED_NODE_ARGS, 'dist/src/main.js'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const recomputed: { audience: number; size: number; added: number; removed: number; durationMs: number }[] = [];
  const waiting = new Map<number, (entry: (typeof recomputed)[number]) => void>();
  createInterface({ input: server.stdout! }).on('line', (line) => {
    if (!line.includes('audience members recomputed')) return;
    const entry = JSON.parse(line) as (typeof recomputed)[number];
    recomputed.push(entry);
    waiting.get(entry.audience)?.(entry);
  });
  const headers = { authorization: `Api-Key ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body: unknown) =>
    (await (await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body: JSON.stringify(body) })).json()) as { id: number };
  /** Runs `trigger` and answers the recompute of `audience` it causes, with the wall time from the request to the log line. */
  const measured = async (audience: number | undefined, trigger: () => Promise<number>) => {
    const started = performance.now();
    let resolveEntry!: (entry: (typeof recomputed)[number]) => void;
    const entry = new Promise<(typeof recomputed)[number]>((resolve) => (resolveEntry = resolve));
    if (audience !== undefined) waiting.set(audience, resolveEntry);
    const id = await trigger();
    if (audience === undefined) waiting.set(id, resolveEntry);
    const done = await entry;
    waiting.delete(id);
    return { ...done, wallSeconds: Number(((performance.now() - started) / 1000).toFixed(2)) };
  };
  try {
    await waitForHealth(port);
    const rules = await measured(
      undefined,
      async () => (await call('POST', '/api/v1/audiences/', { name: 'bench rules', source_type: 'rules', rules: RULES })).id,
    );
    log(`rules, first: ${JSON.stringify(rules)}`);
    const unchanged = await measured(rules.audience, async () => {
      await call('PATCH', `/api/v1/audiences/${rules.audience}/`, { status: 'active' });
      return rules.audience;
    });
    log(`rules, nothing changed: ${JSON.stringify(unchanged)}`);
    // 5% of the people change their lifetime value: about as many join as leave.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `UPDATE people SET traits = jsonb_set(traits, '{ltv}', to_jsonb(999 - (traits->>'ltv')::int)) WHERE customer_id = $1 AND id % 20 = 0`,
      [customerId],
    );
    await client.end();
    const churn = await measured(rules.audience, async () => {
      await call('POST', '/api/v1/people/batch/', { people: [{ external_id: 'p-1', traits: { touched: true } }] });
      return rules.audience;
    });
    log(`rules, 5% churn: ${JSON.stringify(churn)}`);
    const model = await measured(
      undefined,
      async () =>
        (await call('POST', '/api/v1/audiences/', { name: 'bench model', source_type: 'model', model_instance: modelId, min_score: 0.5 }))
          .id,
    );
    log(`model, first: ${JSON.stringify(model)}`);
    const result = {
      people,
      rules_first_recompute: rules,
      rules_unchanged_recompute: unchanged,
      rules_5_percent_churn_recompute: churn,
      model_first_recompute: model,
      rules_selection_plan: (await plans(url, customerId)).split('\n'),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
}

await main();
