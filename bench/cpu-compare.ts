import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import pg from 'pg';
import { createDatabaseIfMissing } from './database.js';
import { CLOCK_TICKS_PER_SECOND, fetchJson, machineBusyTicks, nearestRank, processTicks, round } from './load.js';
import { note } from './progress.js';
import { type Auth, gitCommit, table } from './report.js';
import { prepareRun, seed } from './seed.js';
import { freePort, hasTaskset, login, type RunningServer, startServer } from './servers.js';
import { DEPLOYED_NODE_ARGS, REPO_ROOT } from './settings.js';

/**
 * `node dist/bench/cpu-compare.js --before DIR --after DIR [--node PATH]`: CPU time per request of
 * two builds of the service, run as deployed (NODE_ENV=production, LOG_LEVEL=info, stdout on a
 * drained pipe into a file). Requests/s swing ±20% on a shared 2-core machine; the CPU time the
 * server process spends on a fixed number of requests moves much less, so that is what is compared.
 *
 * Each round starts a fresh server of each build, logs in on each, warms both up on every scenario,
 * then measures every scenario and credential on both in slices that alternate A B B A A B …
 * (B A A B … in the next round), so changes in the machine's load hit both builds alike.
 * Server CPU is utime + stime of the process, all threads, from /proc/<pid>/stat before and after
 * the requests. The report gives medians over the rounds, and the paired ratio of the slices with
 * its interval: on a busy machine the steadier figure, and the one that says whether a difference is noise.
 */

const DATABASE_NAME = 'bench_cpu';
const APPLICATION_NAME = 'bench-cpu-compare';
/** Lets the last responses' log lines and hooks finish before the server's CPU time is read. */
const SETTLE_MS = 100;
const MAIN = 'dist/src/main.js';
const CLI = 'dist/src/cli/audience-admin.js';
const MIGRATIONS = 'dist/src/database/migrations';

const USAGE = `usage: node dist/bench/cpu-compare.js --before DIR --after DIR [options]

  --before DIR, --after DIR  checkouts with a built dist/ and node_modules (the same DIR twice: the noise floor)
  --node PATH                node binary of the servers and of the migration [BENCH_CPU_NODE, this node]
  --rounds N                 rounds; each starts a fresh server of each build [BENCH_CPU_ROUNDS, 5]
  --requests N               measured requests per scenario, credential and build in a round [BENCH_CPU_REQUESTS, 3000]
  --warmup N                 warm-up requests per scenario, credential and build in a round [BENCH_CPU_WARMUP, 1000]
  --connections N            autocannon connections [BENCH_CPU_CONNECTIONS, 32]
  --slices N                 measured requests go in N slices per build, alternating between the builds [BENCH_CPU_SLICES, 6]
  --signals N, --audiences N size of the seeded workspace [5000, 2000]
  --database-url URL         PostgreSQL server, where database ${DATABASE_NAME} is created and used
                             [BENCH_CPU_DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres]
  --results-dir DIR          where the JSON goes [bench/results]
  --no-pin                   do not pin the servers to CPU 0 and this process (autocannon) to CPU 1
`;

interface CompareOptions {
  before: string;
  after: string;
  node: string;
  rounds: number;
  requests: number;
  warmup: number;
  connections: number;
  slices: number;
  signals: number;
  audiences: number;
  serverUrl: string;
  resultsDir: string;
  dataDir: string;
  pin: boolean;
}

type VariantLabel = 'before' | 'after';

interface Variant {
  label: VariantLabel;
  dir: string;
  commit: string;
}

interface StartedVariant {
  server: RunningServer;
  credentials: Record<Auth, string>;
}

interface CpuScenario {
  name: string;
  /** A fresh request per autocannon run, so every run walks the same ids in the same order. */
  request(authorization: string, audienceIds: number[]): Request;
}

/** What one or more autocannon runs against one server cost and gave. */
interface Block {
  requests: number;
  /** Non-2xx responses, socket errors and timeouts. */
  failures: number;
  /** From the first request to the last response. */
  seconds: number;
  /** The whole measured window, settle time included (for the machine's load). */
  windowSeconds: number;
  serverTicks: number;
  postgresTicks: number | null;
  machineTicks: number;
  logBytes: number;
  latencies: number[];
}

interface Measurement {
  round: number;
  variant: VariantLabel;
  scenario: string;
  auth: Auth;
  requests: number;
  failures: number;
  serverCpuUsPerRequest: number;
  /** The backends serving this database (the server's pool); null when PostgreSQL is not a local process. */
  postgresCpuUsPerRequest: number | null;
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  /** Both cores busy = 200: how much else the machine was doing meanwhile. */
  machineBusyPercent: number;
  /** Approximate (the log goes through a pipe): shows the request log at info was on. */
  logBytesPerRequest: number;
  /** Per slice, in order: slice i of one build ran right before or after slice i of the other. */
  sliceCpuUsPerRequest: number[];
}

interface VariantSummary {
  serverCpuUsPerRequest: number;
  serverCpuUsRange: [number, number];
  postgresCpuUsPerRequest: number | null;
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  failures: number;
}

interface SummaryRow {
  scenario: string;
  auth: Auth;
  before: VariantSummary;
  after: VariantSummary;
  /** Median after ÷ median before of the server's CPU per request. */
  cpuRatio: number;
  /** after ÷ before within each round: median, lowest, highest. */
  roundRatioMedian: number;
  roundRatioRange: [number, number];
  /** after ÷ before over the slice pairs (slice i of both builds, run back to back): see pairedRatio. */
  slicePairs: PairedRatio;
}

interface PairedRatio {
  pairs: number;
  /** Geometric mean of the pairs' ratios. */
  ratio: number;
  /** ratio × / ÷ e^(2 standard errors of the mean log ratio): about a 95% interval. */
  low: number;
  high: number;
}

interface RunMeta {
  date: string;
  node: string;
  variants: Record<VariantLabel, Variant>;
  machine: string;
  postgres: string;
  data: string;
  method: string;
  load: string;
  options: CompareOptions;
}

const get = (authorization: string, path: string): Request => ({ method: 'GET', path, headers: { authorization } });

const SCENARIOS: CpuScenario[] = [
  { name: 'audiences p1', request: (authorization) => get(authorization, '/api/v1/audiences/') },
  { name: 'signals ?status=1', request: (authorization) => get(authorization, '/api/v1/signals/?status=1') },
  {
    name: 'audience detail',
    request: (authorization, audienceIds) => {
      let next = 0;
      return {
        method: 'GET',
        headers: { authorization },
        setupRequest: (request) => ({ ...request, path: `/api/v1/audiences/${audienceIds[next++ % audienceIds.length]!}/` }),
      };
    },
  },
];
const AUTHS: Auth[] = ['jwt', 'api-key'];

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2), process.env);
  const date = new Date().toISOString();
  const loadBefore = loadavg();
  const variants: Record<VariantLabel, Variant> = {
    before: { label: 'before', dir: options.before, commit: gitCommit(options.before) },
    after: { label: 'after', dir: options.after, commit: gitCommit(options.after) },
  };
  const nodeVersion = execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim();
  note(`node ${nodeVersion} (${options.node})`);
  note(`before: ${variants.before.commit} (${options.before}); after: ${variants.after.commit} (${options.after})`);

  const databaseUrl = new URL(options.serverUrl);
  databaseUrl.pathname = `/${DATABASE_NAME}`;
  await createDatabaseIfMissing(options.serverUrl, DATABASE_NAME);
  const baseEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    ALLOWED_HOSTS: '127.0.0.1,localhost',
    DATABASE_URL: databaseUrl.toString(),
    DATA_DIR: join(options.dataDir, 'service-data'),
    JWT_SECRET: randomBytes(36).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  await migrate(options.node, variants.before.dir, baseEnv);
  warnOnNewMigrations(variants.before.dir, variants.after.dir);

  const pool = new pg.Pool({ connectionString: databaseUrl.toString(), max: 2, application_name: APPLICATION_NAME });
  const running = new Set<RunningServer>();
  process.once('SIGINT', () => void Promise.all([...running].map((server) => server.stop())).then(() => process.exit(130)));
  try {
    const [workspace] = await seed(pool, [{ role: 'main', signals: options.signals, audiences: options.audiences }]);
    const apiKey = (await prepareRun(pool, [workspace!])).get(workspace!.customerId)!;
    const audienceIds = (
      await pool.query<{ id: number }>('SELECT id FROM audiences WHERE customer_id = $1 ORDER BY id', [workspace!.customerId])
    ).rows.map((row) => row.id);
    const postgresPool = (await postgresIsLocal(pool)) ? pool : undefined;
    if (!postgresPool) note('PostgreSQL is not a process of this machine: its CPU per request is not measured');

    const pinned = options.pin && cpus().length >= 2 && hasTaskset();
    if (pinned) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });

    const startVariant = async (label: VariantLabel): Promise<StartedVariant> => {
      const port = await freePort();
      const server = await startServer({
        name: 'service',
        script: join(variants[label].dir, MAIN),
        cwd: variants[label].dir,
        logDir: join(options.dataDir, 'logs', label),
        cpu: pinned ? 0 : undefined,
        port,
        node: options.node,
        // BENCH_CPU_NODE_ARGS adds node options to both builds' servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
        nodeArgs: [...DEPLOYED_NODE_ARGS, ...(process.env.BENCH_CPU_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '')],
        env: {
          ...baseEnv,
          HOST: '127.0.0.1',
          PORT: String(port),
          LOG_LEVEL: 'info',
          DEMO_WORKSPACE: 'false',
          RATE_LIMIT_PER_MINUTE: '1000000',
          JWT_ACCESS_TTL_SECONDS: String(6 * 3600),
          // API-only, as docker-compose.yml runs the api replicas: job workers polling in the same
          // process would be counted as request CPU (builds without jobs ignore it).
          WORKER_CONCURRENCY: '0',
        },
      });
      running.add(server);
      const credentials: Record<Auth, string> = {
        jwt: `Bearer ${await login(server.baseUrl, workspace!.email)}`,
        'api-key': `Api-Key ${apiKey}`,
      };
      await checkAnswers(server, credentials, audienceIds);
      return { server, credentials };
    };

    const measurements: Measurement[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const [first, second]: VariantLabel[] = round % 2 === 1 ? ['before', 'after'] : ['after', 'before'];
      note(`round ${round}/${options.rounds}: ${first} first`);
      try {
        const servers = {} as Record<VariantLabel, StartedVariant>;
        for (const label of [first, second]) servers[label] = await startVariant(label);
        for (const scenario of SCENARIOS) {
          for (const auth of AUTHS) {
            for (const label of [first, second]) {
              const { server, credentials } = servers[label];
              await drive(server, scenario.request(credentials[auth], audienceIds), options.warmup, options.connections);
            }
          }
        }
        for (const scenario of SCENARIOS) {
          for (const auth of AUTHS) {
            const blocks: Record<VariantLabel, Block[]> = { before: [], after: [] };
            for (let slice = 0; slice < options.slices; slice++) {
              const amount = sliceSize(options.requests, options.slices, slice);
              for (const label of slice % 2 === 0 ? [first, second] : [second, first]) {
                const { server, credentials } = servers[label];
                const request = scenario.request(credentials[auth], audienceIds);
                blocks[label].push(await measure(server, request, amount, options.connections, postgresPool));
              }
            }
            for (const label of [first, second]) {
              measurements.push({ round, variant: label, scenario: scenario.name, auth, ...toMeasurement(blocks[label]) });
            }
          }
        }
      } finally {
        await Promise.all([...running].map((server) => server.stop()));
        running.clear();
      }
    }

    const summary = summarise(measurements);
    const overall = pairedRatio(
      slicePairs(
        measurements.filter((entry) => entry.variant === 'before'),
        measurements.filter((entry) => entry.variant === 'after'),
      ),
    );
    const meta: RunMeta = {
      date,
      node: `${nodeVersion} (${options.node})`,
      variants,
      machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
      postgres: (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version,
      data: `${options.signals} signals, ${options.audiences} audiences (${workspace!.name})`,
      method:
        `${options.rounds} rounds, each with a fresh server per build (NODE_ENV=production, LOG_LEVEL=info, stdout+stderr piped to a file); ` +
        `${options.warmup} warm-up requests per scenario, credential and build, then ${options.requests} measured ones ` +
        `(${options.slices} slices per build, A B B A …) at ${options.connections} connections; ` +
        `server CPU = utime+stime of the process (all threads) from /proc/<pid>/stat; ` +
        (pinned ? 'servers pinned to CPU 0, autocannon to CPU 1, PostgreSQL unpinned' : 'no CPU pinning'),
      load: `load average before ${formatLoad(loadBefore)}, after ${formatLoad(loadavg())}`,
      options,
    };
    const file = writeResults(options.resultsDir, date, { meta, overall, summary, measurements });
    process.stdout.write(`\n${render(meta, summary, overall)}\nresults: ${file}\n`);
  } finally {
    await pool.end();
  }
}

function readOptions(argv: string[], env: NodeJS.ProcessEnv): CompareOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      before: { type: 'string' },
      after: { type: 'string' },
      node: { type: 'string' },
      rounds: { type: 'string' },
      requests: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      slices: { type: 'string' },
      signals: { type: 'string' },
      audiences: { type: 'string' },
      'database-url': { type: 'string' },
      'results-dir': { type: 'string' },
      'no-pin': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const count = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got "${raw}")`);
    return value;
  };
  const checkout = (name: VariantLabel) => {
    const dir = values[name];
    if (!dir) throw new Error(`--${name} is required\n\n${USAGE}`);
    const absolute = resolve(dir);
    for (const needed of [MAIN, CLI, 'node_modules']) {
      if (!existsSync(join(absolute, needed))) throw new Error(`${absolute} has no ${needed}: run npm ci and npm run build there`);
    }
    return absolute;
  };
  const options: CompareOptions = {
    before: checkout('before'),
    after: checkout('after'),
    node: resolve(values.node ?? env.BENCH_CPU_NODE ?? process.execPath),
    rounds: count('rounds', values.rounds ?? env.BENCH_CPU_ROUNDS, 5),
    requests: count('requests', values.requests ?? env.BENCH_CPU_REQUESTS, 3000),
    warmup: count('warmup', values.warmup ?? env.BENCH_CPU_WARMUP, 1000),
    connections: count('connections', values.connections ?? env.BENCH_CPU_CONNECTIONS, 32),
    slices: count('slices', values.slices ?? env.BENCH_CPU_SLICES, 6),
    signals: count('signals', values.signals, 5000),
    audiences: count('audiences', values.audiences, 2000),
    serverUrl: values['database-url'] ?? env.BENCH_CPU_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    resultsDir: resolve(values['results-dir'] ?? join(REPO_ROOT, 'bench/results')),
    dataDir: join(REPO_ROOT, 'bench/.data/cpu-compare'),
    pin: values['no-pin'] !== true,
  };
  // autocannon refuses fewer requests than connections.
  if (Math.floor(options.requests / options.slices) < options.connections)
    throw new Error('requests ÷ slices must be at least the connections');
  return options;
}

/** The schema, once, with the "before" build's own CLI (each server then finds nothing to apply). */
async function migrate(node: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  note(`migrating ${DATABASE_NAME} with ${join(dir, CLI)}`);
  await promisify(execFile)(node, [CLI, 'migrate'], { cwd: dir, env });
}

/**
 * Each server migrates on start. Migrations only "after" has would be applied by its first start,
 * and every later "before" server would run on the newer schema: say so rather than hide it.
 */
function warnOnNewMigrations(before: string, after: string): void {
  const names = (dir: string) => readdirSync(join(dir, MIGRATIONS)).filter((name) => /^\d+-.+\.js$/.test(name));
  const known = new Set(names(before));
  const added = names(after).filter((name) => !known.has(name));
  if (added.length > 0) note(`WARNING: "after" adds migrations (${added.join(', ')}): "before" servers will run on the newer schema`);
}

/** Whether the database backends are processes of this machine, whose CPU time /proc shows. */
async function postgresIsLocal(pool: pg.Pool): Promise<boolean> {
  const pid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return false;
  }
}

/** CPU ticks of the client backends of this database other than this script's: the servers' pools. */
async function backendTicks(pool: pg.Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> $1`,
    [APPLICATION_NAME],
  );
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    const value = processTicks(pid);
    if (value !== undefined) ticks.set(pid, value);
  }
  return ticks;
}

/** One request of every scenario and credential must succeed before any load. */
async function checkAnswers(server: RunningServer, credentials: Record<Auth, string>, audienceIds: number[]): Promise<void> {
  for (const scenario of SCENARIOS) {
    for (const auth of AUTHS) {
      const request = scenario.request(credentials[auth], audienceIds);
      const { path, headers } = request.setupRequest ? request.setupRequest(request, {}) : request;
      const { status, body } = await fetchJson(`${server.baseUrl}${path!}`, { headers });
      if (status !== 200) throw new Error(`${scenario.name} (${auth}): GET ${path!} answered ${status} ${JSON.stringify(body)}`);
    }
  }
}

/** `amount` requests; the seconds run from the start to the last response, and every response's latency in ms is kept. */
async function drive(server: RunningServer, request: Request, amount: number, connections: number) {
  const latencies: number[] = [];
  const started = performance.now();
  let lastResponse = started;
  // sampleInt: with `amount`, autocannon notices it is done only at its next sample (1 s by default).
  const instance = autocannon({ url: server.baseUrl, connections, amount, requests: [request], sampleInt: 100 });
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    lastResponse = performance.now();
    latencies.push(responseTime);
  });
  const result = await instance;
  return { result, latencies, seconds: (lastResponse - started) / 1000 };
}

async function measure(
  server: RunningServer,
  request: Request,
  amount: number,
  connections: number,
  pool: pg.Pool | undefined,
): Promise<Block> {
  const logBytes = statSync(server.logFile).size;
  const postgresStart = pool ? await backendTicks(pool) : undefined;
  const windowStart = performance.now();
  const machineStart = machineBusyTicks();
  const serverStart = processTicks(server.pid)!;
  const { result, latencies, seconds } = await drive(server, request, amount, connections);
  await sleep(SETTLE_MS);
  const serverTicks = processTicks(server.pid)! - serverStart;
  const machineTicks = machineBusyTicks() - machineStart;
  const windowSeconds = (performance.now() - windowStart) / 1000;
  let postgresTicks: number | null = null;
  if (postgresStart) {
    // A backend the pool opened meanwhile counts in full; one it closed meanwhile is lost (rare: the pool stays busy).
    postgresTicks = 0;
    for (const [pid, end] of await backendTicks(pool!)) postgresTicks += end - (postgresStart.get(pid) ?? 0);
  }
  return {
    requests: Object.values(result.statusCodeStats ?? {}).reduce((sum, stats) => sum + Number(stats.count), 0),
    failures: result.non2xx + result.errors + result.timeouts,
    seconds,
    windowSeconds,
    serverTicks,
    postgresTicks,
    machineTicks,
    logBytes: statSync(server.logFile).size - logBytes,
    latencies,
  };
}

function usPerRequest(ticks: number, requests: number): number {
  return round((ticks * (1_000_000 / CLOCK_TICKS_PER_SECOND)) / Math.max(1, requests), 1);
}

/** The requests of slice `index` of `count`: equal parts, the remainder spread over the first ones. */
function sliceSize(total: number, count: number, index: number): number {
  return Math.floor(total / count) + (index < total % count ? 1 : 0);
}

function toMeasurement(blocks: Block[]): Omit<Measurement, 'round' | 'variant' | 'scenario' | 'auth'> {
  const sum = (pick: (block: Block) => number) => blocks.reduce((total, block) => total + pick(block), 0);
  const requests = sum((block) => block.requests);
  const serverTicks = sum((block) => block.serverTicks);
  const postgresTicks = blocks.some((block) => block.postgresTicks === null) ? null : sum((block) => block.postgresTicks!);
  const latencies = blocks.flatMap((block) => block.latencies).sort((a, b) => a - b);
  const percentile = (fraction: number) => round(nearestRank(latencies, fraction), 1);
  return {
    requests,
    failures: sum((block) => block.failures),
    serverCpuUsPerRequest: usPerRequest(serverTicks, requests),
    postgresCpuUsPerRequest: postgresTicks === null ? null : usPerRequest(postgresTicks, requests),
    requestsPerSecond: round(requests / sum((block) => block.seconds), 0),
    latencyP50: percentile(0.5),
    latencyP99: percentile(0.99),
    machineBusyPercent: round((sum((block) => block.machineTicks) / CLOCK_TICKS_PER_SECOND / sum((block) => block.windowSeconds)) * 100, 0),
    logBytesPerRequest: Math.round(sum((block) => block.logBytes) / Math.max(1, requests)),
    sliceCpuUsPerRequest: blocks.map((block) => usPerRequest(block.serverTicks, block.requests)),
  };
}

function summarise(measurements: Measurement[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const scenario of SCENARIOS) {
    for (const auth of AUTHS) {
      const of = (variant: VariantLabel) =>
        measurements.filter((entry) => entry.scenario === scenario.name && entry.auth === auth && entry.variant === variant);
      const [before, after] = [of('before'), of('after')];
      const roundRatios = before.flatMap((entry) => {
        const paired = after.find((other) => other.round === entry.round);
        return paired ? [paired.serverCpuUsPerRequest / entry.serverCpuUsPerRequest] : [];
      });
      const summaryBefore = summariseVariant(before);
      const summaryAfter = summariseVariant(after);
      rows.push({
        scenario: scenario.name,
        auth,
        before: summaryBefore,
        after: summaryAfter,
        cpuRatio: round(summaryAfter.serverCpuUsPerRequest / summaryBefore.serverCpuUsPerRequest, 3),
        roundRatioMedian: round(median(roundRatios), 3),
        roundRatioRange: [round(Math.min(...roundRatios), 3), round(Math.max(...roundRatios), 3)],
        slicePairs: pairedRatio(slicePairs(before, after)),
      });
    }
  }
  return rows;
}

/** [before, after] CPU per request of each slice pair. */
function slicePairs(before: Measurement[], after: Measurement[]): [number, number][] {
  return before.flatMap((entry) => {
    const paired = after.find((other) => other.round === entry.round && other.scenario === entry.scenario && other.auth === entry.auth);
    if (!paired) return [];
    return entry.sliceCpuUsPerRequest.map((value, index): [number, number] => [value, paired.sliceCpuUsPerRequest[index]!]);
  });
}

/**
 * Slices are short, so each one is noisy (a shared machine's load changes within seconds), but
 * slice i of both builds ran back to back: the log of after ÷ before per pair is a paired
 * sample whose mean and standard error give the ratio and how sure it is.
 */
function pairedRatio(pairs: [number, number][]): PairedRatio {
  const logs = pairs.filter(([before, after]) => before > 0 && after > 0).map(([before, after]) => Math.log(after / before));
  const mean = logs.reduce((sum, value) => sum + value, 0) / Math.max(1, logs.length);
  const variance = logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / Math.max(1, logs.length - 1);
  const margin = 2 * Math.sqrt(variance / Math.max(1, logs.length));
  return {
    pairs: logs.length,
    ratio: round(Math.exp(mean), 3),
    low: round(Math.exp(mean - margin), 3),
    high: round(Math.exp(mean + margin), 3),
  };
}

function summariseVariant(entries: Measurement[]): VariantSummary {
  const cpu = entries.map((entry) => entry.serverCpuUsPerRequest);
  const postgres = entries.map((entry) => entry.postgresCpuUsPerRequest);
  return {
    serverCpuUsPerRequest: round(median(cpu), 1),
    serverCpuUsRange: [Math.min(...cpu), Math.max(...cpu)],
    postgresCpuUsPerRequest: postgres.every((value) => value !== null) ? round(median(postgres), 1) : null,
    requestsPerSecond: round(median(entries.map((entry) => entry.requestsPerSecond)), 0),
    latencyP50: round(median(entries.map((entry) => entry.latencyP50)), 1),
    latencyP99: round(median(entries.map((entry) => entry.latencyP99)), 1),
    failures: entries.reduce((sum, entry) => sum + entry.failures, 0),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function render(meta: RunMeta, summary: SummaryRow[], overall: PairedRatio): string {
  const header = [
    `CPU per request ${meta.date} — node ${meta.node}`,
    `before: ${meta.variants.before.commit} (${meta.variants.before.dir}); after: ${meta.variants.after.commit} (${meta.variants.after.dir})`,
    `data: ${meta.data}; PostgreSQL ${meta.postgres}; ${meta.machine}`,
    `method: ${meta.method}`,
    meta.load,
  ].join('\n');
  const grid = table(
    [
      'scenario',
      'auth',
      'CPU µs/req before',
      'after',
      'after/before',
      'slice pairs (95%)',
      'per round',
      'pg µs/req before',
      'after',
      'req/s before',
      'after',
      'p50/p99 ms before',
      'after',
      'failures',
    ],
    summary.map((row) => [
      row.scenario,
      row.auth,
      row.before.serverCpuUsPerRequest.toFixed(1),
      row.after.serverCpuUsPerRequest.toFixed(1),
      row.cpuRatio.toFixed(3),
      `${row.slicePairs.ratio.toFixed(3)} (${row.slicePairs.low.toFixed(3)}–${row.slicePairs.high.toFixed(3)})`,
      `${row.roundRatioRange[0].toFixed(3)}–${row.roundRatioRange[1].toFixed(3)}`,
      row.before.postgresCpuUsPerRequest?.toFixed(1) ?? '-',
      row.after.postgresCpuUsPerRequest?.toFixed(1) ?? '-',
      row.before.requestsPerSecond,
      row.after.requestsPerSecond,
      `${row.before.latencyP50}/${row.before.latencyP99}`,
      `${row.after.latencyP50}/${row.after.latencyP99}`,
      row.before.failures + row.after.failures,
    ]),
  );
  const geometricMean = Math.exp(summary.reduce((sum, row) => sum + Math.log(row.cpuRatio), 0) / summary.length);
  return (
    `${header}\n\n${grid}\n\nafter/before CPU per request over all rows: geometric mean of the medians' ratios ${geometricMean.toFixed(3)}; ` +
    `all ${overall.pairs} slice pairs ${overall.ratio.toFixed(3)} (95%: ${overall.low.toFixed(3)}–${overall.high.toFixed(3)})\n`
  );
}

function formatLoad(values: number[]): string {
  return values.map((value) => value.toFixed(2)).join(' ');
}

function writeResults(
  dir: string,
  date: string,
  results: { meta: RunMeta; overall: PairedRatio; summary: SummaryRow[]; measurements: Measurement[] },
): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `cpu-compare-${date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

main().catch((error: unknown) => {
  process.stderr.write(`cpu-compare failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
