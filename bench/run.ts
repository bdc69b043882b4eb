import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import pg from 'pg';
import { dataPlaneSizes, runDataPlane } from './data-plane.js';
import { openBenchDatabase } from './database.js';
import { fetchJson, type LoadResult, readRssKb, round, runLoad } from './load.js';
import { note } from './progress.js';
import {
  type Auth,
  checkTargets,
  gitCommit,
  type GrowthRecord,
  type Report,
  renderReport,
  type ScenarioRecord,
  writeReport,
} from './report.js';
import { SCENARIOS, type ScenarioData } from './scenarios.js';
import { EVENTS_SIGNAL_NAME, prepareRun, seed, type SeededWorkspace, workspacePlans } from './seed.js';
import { freePort, hasTaskset, login, type RunningServer, startServer } from './servers.js';
import { DEPLOYED_NODE_ARGS, NO_TIMED_JOBS, readSettings } from './settings.js';

const PAGE_SIZE = 20;
/** The deep page of the throughput scenarios, and the bound of the growth scenarios' deep page. */
const MAIN_DEEP_PAGE_MAX = 500;
const GROWTH_DEEP_PAGE_MAX = 25_000;
const JWT_ISSUER = 'audience-signal-platform';
/** The scenarios the framework floor (bench/floor.ts) serves: the reads and the data plane's writes. */
const READ_SCENARIOS = new Set(['audiences p1', 'signals ?status=1', 'signals deep page', 'signal detail']);
const FLOOR_SCENARIOS = new Set([...READ_SCENARIOS, 'people batch', 'signal events']);

/**
 * `npm run bench`: seed (once), start the built service and the ceiling, drive the same load at
 * both, print one report and write it as JSON under bench/results/. See docs/benchmarks.md.
 * BENCH_FLOOR=1 adds the framework floor, measured on the scenarios it serves (FLOOR_SCENARIOS).
 */
async function main(): Promise<void> {
  const settings = readSettings();
  const date = new Date().toISOString();
  const loadBefore = loadavg();
  const database = await openBenchDatabase(settings.dataDir);
  const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: 'bench-run' });
  const servers: RunningServer[] = [];
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(servers.map((server) => server.stop()));
    await pool.end().catch(() => {});
    await database.close();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

  try {
    const workspaces = await seed(pool, workspacePlans(settings), { reseed: settings.reseed });
    const apiKeys = await prepareRun(pool, workspaces);
    const main = workspaces.find((workspace) => workspace.role === 'main')!;
    const growth = workspaces.filter((workspace) => workspace.role === 'growth');
    const data = await scenarioData(pool, main);
    const postmasterPid = embeddedPostmasterPid(settings.dataDir, database.url);
    const explain = await collectExplains(pool, workspaces);

    // Sharing 2 cores: the server under test gets CPU 0 to itself, the load generator (this process,
    // all its threads) CPU 1; PostgreSQL, started before the pinning, may run on either.
    const pinned = settings.pin && cpus().length >= 2 && hasTaskset();
    if (pinned) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    const serverCpu = pinned ? 0 : undefined;

    const secret = randomBytes(36).toString('base64url');
    const common = {
      ...withoutKeys(process.env, ['REDIS_URL', 'PUBLIC_BASE_URL', 'DATABASE_POOL_SIZE']),
      DATABASE_URL: database.url,
      JWT_SECRET: secret,
      JWT_ISSUER,
      RATE_LIMIT_PER_MINUTE: '1000000',
      // The people batches' membership recompute waits an hour, so no recompute of the main
      // workspace's audiences runs during the measurements; the next run removes the waiting job.
      MEMBERSHIP_DEBOUNCE_SECONDS: '3600',
      ...NO_TIMED_JOBS,
    };
    const servicePort = await freePort();
    const service = await startServer({
      name: 'service',
      script: join(settings.repoRoot, 'dist/src/main.js'),
      cwd: settings.repoRoot,
      logDir: join(settings.dataDir, 'logs'),
      cpu: serverCpu,
      port: servicePort,
      env: {
        ...common,
        NODE_ENV: 'production',
        ALLOWED_HOSTS: '127.0.0.1,localhost',
        // As deployed: a request line per request, written through a pipe into logs/service.log.
        LOG_LEVEL: settings.serviceLogLevel,
        DEMO_WORKSPACE: 'false',
        HOST: '127.0.0.1',
        PORT: String(servicePort),
        ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        // Long enough that no access token expires during a full run.
        JWT_ACCESS_TTL_SECONDS: String(6 * 3600),
        DATA_DIR: join(settings.dataDir, 'service'),
      },
      // e.g. BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/.data/prof" to profile the service under load.
      nodeArgs: [...DEPLOYED_NODE_ARGS, ...settings.serviceNodeArgs],
    });
    servers.push(service);
    // The ceiling and the floor: hand-made servers on the same core, told their port in `portVariable`.
    const startBare = async (name: 'ceiling' | 'floor', portVariable: string) => {
      const port = await freePort();
      const server = await startServer({
        name,
        script: join(settings.repoRoot, `dist/bench/${name}.js`),
        cwd: settings.repoRoot,
        logDir: join(settings.dataDir, 'logs'),
        cpu: serverCpu,
        port,
        env: { ...common, [portVariable]: String(port) },
        // The service's V8 settings, so that peak RSS (and GC's share of CPU) compare like for like.
        nodeArgs: [...DEPLOYED_NODE_ARGS, ...(name === 'floor' ? settings.floorNodeArgs : [])],
      });
      servers.push(server);
      return server;
    };
    const ceiling = settings.skipCeiling ? undefined : await startBare('ceiling', 'CEILING_PORT');
    const floor = settings.floor ? await startBare('floor', 'FLOOR_PORT') : undefined;

    const idleRss = {
      service: round((readRssKb(service.pid) ?? 0) / 1024, 1),
      ceiling: ceiling ? round((readRssKb(ceiling.pid) ?? 0) / 1024, 1) : null,
      ...(floor ? { floor: round((readRssKb(floor.pid) ?? 0) / 1024, 1) } : {}),
    };

    // One login per workspace through the real endpoint; the same JWT and API key work on the
    // ceiling, which verifies them with the same secret against the same rows.
    const credentials = new Map<number, Record<Auth, string>>();
    for (const workspace of workspaces) {
      const jwt = await login(service.baseUrl, workspace.email);
      credentials.set(workspace.customerId, { jwt: `Bearer ${jwt}`, 'api-key': `Api-Key ${apiKeys.get(workspace.customerId)!}` });
    }
    const mainAuth = credentials.get(main.customerId)!;
    const samples = sampleRequests(mainAuth.jwt, data, growth, credentials);
    const equivalence = ceiling ? await compareAnswers(service, ceiling, samples) : [];
    const floorEquivalence = floor ? await compareAnswers(ceiling ?? service, floor, floorSamples(samples, mainAuth)) : undefined;

    const measure = (server: RunningServer, requests: Request[], connections: number, seconds: number) =>
      runLoad({
        url: server.baseUrl,
        requests,
        connections,
        durationSeconds: seconds,
        warmupSeconds: settings.warmupSeconds,
        serverPid: server.pid,
        postmasterPid,
      });

    const scenarioRecords: ScenarioRecord[] = [];
    const runTag = date.slice(11, 19).replace(/:/g, '');
    // A first, longer warm-up of every code path (the mix, both credentials) on each server, so the
    // first measured scenario does not pay for JIT compilation the later ones get for free. The
    // floor serves nothing but the reads, so they are its warm-up.
    const mix = SCENARIOS.find((scenario) => scenario.name.startsWith('mix'))!;
    const reads = SCENARIOS.filter((scenario) => READ_SCENARIOS.has(scenario.name));
    for (const server of servers) {
      note(`warming up ${server.name}`);
      for (const auth of ['jwt', 'api-key'] as const) {
        const tag = `${runTag}-warm-${server.name}-${auth}`;
        await autocannon({
          url: server.baseUrl,
          connections: settings.connections,
          duration: Math.max(1, settings.warmupSeconds * 2),
          requests:
            server.name === 'floor'
              ? reads.flatMap((scenario) => scenario.requests(mainAuth[auth], data, tag))
              : mix.requests(mainAuth[auth], data, tag),
        });
      }
    }
    const runScenarios = async (scenarios: typeof SCENARIOS) => {
      for (const scenario of scenarios) {
        if (settings.only.length > 0 && !settings.only.some((part) => scenario.name.includes(part))) continue;
        const connections = scenario.connections ?? settings.connections;
        for (const auth of ['jwt', 'api-key'] as const) {
          // Service then ceiling, back to back, so both see the same data and the same machine load.
          note(`${scenario.name} (${auth}): service`);
          const onService = await measure(
            service,
            scenario.requests(mainAuth[auth], data, `${runTag}-s-${auth}`),
            connections,
            settings.durationSeconds,
          );
          let onCeiling: LoadResult | null = null;
          if (ceiling && !scenario.hostile) {
            note(`${scenario.name} (${auth}): ceiling`);
            onCeiling = await measure(
              ceiling,
              scenario.requests(mainAuth[auth], data, `${runTag}-c-${auth}`),
              connections,
              settings.durationSeconds,
            );
          }
          let onFloor: LoadResult | null = null;
          if (floor && FLOOR_SCENARIOS.has(scenario.name)) {
            note(`${scenario.name} (${auth}): floor`);
            onFloor = await measure(
              floor,
              scenario.requests(mainAuth[auth], data, `${runTag}-f-${auth}`),
              connections,
              settings.durationSeconds,
            );
          }
          scenarioRecords.push({
            scenario: scenario.name,
            description: scenario.description,
            auth,
            listPageOne: scenario.listPageOne === true,
            hostile: scenario.hostile === true,
            dataPlane: scenario.dataPlane === true,
            comparedWith: scenario.comparedWith,
            service: onService,
            ceiling: onCeiling,
            ratio: ratioOf(onService, onCeiling),
            ...(onFloor ? { floor: onFloor, floorRatio: ratioOf(onFloor, onCeiling) } : {}),
          });
        }
      }
    };
    // Normal traffic first, then the growth workspaces, then the data plane's writes and the hostile
    // bodies: those two grow the heap on purpose (1,000-row bodies, 32 bodies of 0.9 MB at once), and
    // V8 keeps the room for a while, so run earlier they would count in the growth scenarios' RSS.
    const heavy = (scenario: (typeof SCENARIOS)[number]) => scenario.hostile === true || scenario.dataPlane === true;
    await runScenarios(SCENARIOS.filter((scenario) => !heavy(scenario)));

    const growthRecords: GrowthRecord[] = [];
    if (!settings.skipGrowth) {
      for (const workspace of growth) {
        const auth = credentials.get(workspace.customerId)!.jwt;
        for (const [label, page] of [
          ['page 1', 1],
          ['deep page', growthDeepPage(workspace.signals)],
        ] as const) {
          const path = page === 1 ? '/api/v1/signals/' : `/api/v1/signals/?page=${page}`;
          const requests = [{ method: 'GET', path, headers: { authorization: auth } }];
          note(`growth ${workspace.signals} signals, ${label}: service`);
          const onService = await measure(service, requests, settings.growthConnections, settings.growthDurationSeconds);
          let onCeiling: LoadResult | null = null;
          if (ceiling) {
            note(`growth ${workspace.signals} signals, ${label}: ceiling`);
            onCeiling = await measure(ceiling, requests, settings.growthConnections, settings.growthDurationSeconds);
          }
          growthRecords.push({
            workspace: workspace.name,
            signals: workspace.signals,
            page,
            label,
            service: onService,
            ceiling: onCeiling,
            ratio: ratioOf(onService, onCeiling),
          });
        }
      }
    }

    await runScenarios(SCENARIOS.filter(heavy));

    const serviceHwmMb = round((readRssKb(service.pid, 'VmHWM') ?? 0) / 1024, 1);
    const report: Report = {
      meta: {
        date,
        commit: gitCommit(settings.repoRoot),
        machine: machineDescription(),
        node: process.version,
        postgres: await postgresDescription(pool),
        database: database.description,
        dataSizes: await dataSizes(pool, workspaces),
        load:
          `${settings.connections} connections, ${settings.durationSeconds} s per scenario after ${settings.warmupSeconds} s warm-up; ` +
          `growth: ${settings.growthConnections} connections, ${settings.growthDurationSeconds} s; ` +
          (pinned ? 'server under test pinned to CPU 0, autocannon to CPU 1, PostgreSQL unpinned' : 'no CPU pinning') +
          `; service LOG_LEVEL=${settings.serviceLogLevel} through a pipe into a file` +
          `, node options ${[...DEPLOYED_NODE_ARGS, ...settings.serviceNodeArgs].join(' ') || 'none'}` +
          `; load average before ${loadBefore.map((value) => value.toFixed(2)).join(' ')}, after ${loadavg()
            .map((value) => value.toFixed(2))
            .join(' ')}`,
        serviceVmHwmMb: serviceHwmMb,
        rssAfterStartMb: idleRss,
        settings,
      },
      scenarios: scenarioRecords,
      growth: growthRecords,
      targets: checkTargets(scenarioRecords, growthRecords, settings.connections),
      explain,
      equivalence,
      ...(floorEquivalence ? { floorEquivalence } : {}),
    };
    const file = writeReport(report, settings.resultsDir);
    process.stdout.write(
      `\n${renderReport(report)}\nservice RSS after start ${idleRss.service} MB (ceiling ${idleRss.ceiling ?? '-'} MB` +
        `${idleRss.floor === undefined ? '' : `, floor ${idleRss.floor} MB`}); ` +
        `service VmHWM (peak RSS over the whole run) ${serviceHwmMb} MB\nresults: ${file}\n`,
    );
    // The data plane's scenarios start the service themselves, on the same PostgreSQL server, with
    // the request-path servers stopped so they do not share the cores.
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    const sizes = dataPlaneSizes();
    if (sizes.importRows + sizes.people + sizes.signalEvents > 0) {
      const dataPlane = runDataPlane(database.url, sizes, settings.resultsDir, date);
      process.stdout.write(`\ndata plane (SPEC 10.1, 10.2):\n${JSON.stringify(dataPlane, null, 2)}\n`);
    }
  } finally {
    await stopAll();
  }
}

function ratioOf(service: LoadResult, ceiling: LoadResult | null): number | null {
  return ceiling && ceiling.requestsPerSecond > 0 ? round(service.requestsPerSecond / ceiling.requestsPerSecond, 3) : null;
}

function growthDeepPage(signals: number): number {
  return Math.max(1, Math.min(GROWTH_DEEP_PAGE_MAX, Math.floor(Math.ceil(signals / PAGE_SIZE) / 2)));
}

async function scenarioData(pool: pg.Pool, main: SeededWorkspace): Promise<ScenarioData> {
  const ids = async (sql: string) => (await pool.query<{ id: number }>(sql, [main.customerId])).rows.map((row) => row.id);
  const signalIds = await ids('SELECT id FROM signals WHERE customer_id = $1 ORDER BY id');
  return {
    signalIds,
    editableSignalIds: await ids('SELECT id FROM signals WHERE customer_id = $1 AND status <> 4 ORDER BY id'),
    audienceIds: await ids('SELECT id FROM audiences WHERE customer_id = $1 ORDER BY id'),
    deepPage: Math.max(1, Math.min(MAIN_DEEP_PAGE_MAX, Math.floor(Math.ceil(signalIds.length / PAGE_SIZE) / 2))),
    eventsSignalId: (await ids(`SELECT id FROM signals WHERE customer_id = $1 AND name = '${EVENTS_SIGNAL_NAME}'`))[0]!,
  };
}

type Sample = [check: string, path: string, authorization: string];

/** The GETs of the equivalence check: each list, a detail, page 1 of each growth workspace. */
function sampleRequests(
  authorization: string,
  data: ScenarioData,
  growth: SeededWorkspace[],
  credentials: Map<number, Record<Auth, string>>,
): Sample[] {
  return [
    ['audiences p1', '/api/v1/audiences/', authorization],
    ['signals ?status=1', '/api/v1/signals/?status=1', authorization],
    ['signals deep page', `/api/v1/signals/?page=${data.deepPage}`, authorization],
    ['signal detail', `/api/v1/signals/${data.signalIds[Math.floor(data.signalIds.length / 3)]}/`, authorization],
    ...growth.map((workspace): Sample => [
      `growth ${workspace.signals} page 1`,
      '/api/v1/signals/',
      credentials.get(workspace.customerId)!.jwt,
    ]),
  ];
}

/** The floor's share of the samples: the reads, with each credential. */
function floorSamples(samples: Sample[], auth: Record<Auth, string>): Sample[] {
  return samples
    .filter(([name]) => FLOOR_SCENARIOS.has(name))
    .flatMap(([check, path]): Sample[] => [
      [check, path, auth.jwt],
      [`${check} (api-key)`, path, auth['api-key']],
    ]);
}

/**
 * Before any load: the same GETs to two servers must give the same JSON (links compared without
 * their origin). A ceiling (or floor) that answered less would make the ratio meaningless.
 */
async function compareAnswers(reference: RunningServer, other: RunningServer, checks: Sample[]) {
  const results = [];
  for (const [check, path, auth] of checks) {
    const normalise = async (server: RunningServer) => {
      const { status, body } = await fetchJson(`${server.baseUrl}${path}`, { headers: { authorization: auth } });
      return { status, body: JSON.parse(JSON.stringify(body).replaceAll(server.baseUrl, 'http://host')) as unknown };
    };
    const [a, b] = [await normalise(reference), await normalise(other)];
    const same = isDeepStrictEqual(a, b);
    results.push(same ? { check, same } : { check, same, note: `${reference.name} ${a.status}, ${other.name} ${b.status}` });
    if (!same) note(`WARNING: ${reference.name} and ${other.name} answer ${path} differently (${a.status} vs ${b.status})`);
  }
  return results;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the list's statements on every workspace: both ways of counting,
 * page 1 and the deep page; each run twice and the second (warm) plan kept.
 */
async function collectExplains(pool: pg.Pool, workspaces: SeededWorkspace[]): Promise<Record<string, string>> {
  const plans: Record<string, string> = {};
  for (const workspace of workspaces) {
    const deep =
      workspace.role === 'main' ? Math.min(MAIN_DEEP_PAGE_MAX, growthDeepPage(workspace.signals)) : growthDeepPage(workspace.signals);
    const id = Number(workspace.customerId);
    const statements: Record<string, string> = {
      // What a list filtered by anything but status still runs, and what every list ran before tenant_counts.
      'COUNT(*)': `SELECT COUNT(1) AS "cnt" FROM "signals" "signal" WHERE "signal"."customer_id" = ${id}`,
      // What the service runs for a list filtered by nothing but status.
      tenant_counts: `SELECT sum(count) AS count FROM tenant_counts WHERE customer_id = ${id} AND resource = 'signals'`,
      'page 1': `SELECT "signal".* FROM "signals" "signal" WHERE "signal"."customer_id" = ${id} ORDER BY "signal"."id" DESC LIMIT 20 OFFSET 0`,
      [`page ${deep}`]: `SELECT "signal".* FROM "signals" "signal" WHERE "signal"."customer_id" = ${id} ORDER BY "signal"."id" DESC LIMIT 20 OFFSET ${(deep - 1) * PAGE_SIZE}`,
    };
    for (const [label, sql] of Object.entries(statements)) {
      await pool.query(`EXPLAIN (ANALYZE) ${sql}`);
      const rows = (await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`)).rows;
      plans[`${workspace.signals} signals: ${label}`] = `${sql}\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`;
    }
  }
  return plans;
}

function embeddedPostmasterPid(dataDir: string, url: string): number | undefined {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  return new URL(url).port === port ? Number(pid) : undefined;
}

function withoutKeys(env: NodeJS.ProcessEnv, keys: string[]): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const key of keys) delete copy[key];
  return copy;
}

function machineDescription(): string {
  const list = cpus();
  return `${list.length} cores (${list[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} GiB free), Node.js ${process.version}`;
}

async function postgresDescription(pool: pg.Pool): Promise<string> {
  const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  const settings = await pool.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'max_connections')`,
  );
  return `PostgreSQL ${version}; ${settings.rows.map((row) => `${row.name}=${row.setting}${row.unit ?? ''}`).join(', ')}`;
}

async function dataSizes(pool: pg.Pool, workspaces: SeededWorkspace[]): Promise<string> {
  const size = async (sql: string) => (await pool.query<{ size: string }>(sql)).rows[0]!.size;
  const parts = workspaces.map((workspace) =>
    workspace.role === 'main'
      ? `main: ${workspace.signals.toLocaleString('en-US')} signals, ${workspace.audiences.toLocaleString('en-US')} audiences`
      : `growth: ${workspace.signals.toLocaleString('en-US')} signals`,
  );
  const signals = await size(`SELECT pg_size_pretty(pg_total_relation_size('signals')) AS size`);
  const total = await size(`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`);
  return `${parts.join('; ')}; signals table with indexes ${signals}; database ${total}`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
