import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every knob of `npm run bench`, read once from the environment. The defaults are the full run
 * of docs/benchmarks.md; development runs shrink them (BENCH_DURATION=2, small sizes).
 */
export interface BenchSettings {
  /** Seconds of measured load per scenario. */
  durationSeconds: number;
  /** Seconds of unmeasured load before each scenario (JIT, pool, caches). */
  warmupSeconds: number;
  connections: number;
  /** Growth scenarios measure latency, not saturation: fewer connections. */
  growthConnections: number;
  growthDurationSeconds: number;
  mainSignals: number;
  mainAudiences: number;
  growthSizes: number[];
  /** Run only scenarios whose name contains one of these (comma-separated), for development. */
  only: string[];
  /** Pin the server under test and the load generator to separate cores with taskset. */
  pin: boolean;
  /** Drop every bench workspace and seed again. */
  reseed: boolean;
  skipCeiling: boolean;
  skipGrowth: boolean;
  /** Also start the framework floor (bench/floor.ts) and measure the scenarios it serves on it (the reads, the data plane's writes). */
  floor: boolean;
  /** Extra node arguments for the service process only, after DEPLOYED_NODE_ARGS (profiling: --cpu-prof, --heap-prof…). */
  serviceNodeArgs: string[];
  /** The same for the floor's process (BENCH_FLOOR_NODE_ARGS), to profile it like the service. */
  floorNodeArgs: string[];
  /** The service's LOG_LEVEL: `info` as deployed (one line per request, piped to a file as a container's stdout would be). */
  serviceLogLevel: string;
  dataDir: string;
  resultsDir: string;
  repoRoot: string;
}

/** dist/bench/settings.js → the repository root, whatever the working directory. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The seeded admin users' password. A bench database only: not a secret. */
export const BENCH_PASSWORD = 'bench-password-not-a-secret';

/**
 * The service's timed jobs, off while it is measured. On the seeded workspaces the hourly sync
 * schedule starts a run for each of their 1,388 destinations (every one failing against platforms
 * that are not there), the membership refresh recomputes every audience and the connection sweep
 * checks every grant, all in the measured process: on 2026-11-29 a read scenario that spanned the
 * top of the hour ran 20 to 100 jobs a second beside its requests. The workers still run, idle.
 */
export const NO_TIMED_JOBS: Readonly<Record<string, string>> = {
  SYNC_INTERVAL_HOURS: '0',
  MEMBERSHIP_REFRESH_MINUTES: '0',
  CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
};

/**
 * The node options the service is deployed with, read from package.json's `start` script (the
 * Dockerfile runs the same; test/containers.spec.ts holds the two together), so the bench runs the
 * service, the floor and the ceiling the way `npm start` does.
 */
export const DEPLOYED_NODE_ARGS: readonly string[] = startScriptNodeArgs();

function startScriptNodeArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('dist/src/main.js'));
}

/** The service's pool size (DATABASE_POOL_SIZE default); the ceiling and the floor use the same. */
export const POOL_SIZE = 10;

export function readSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const number = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number (got "${raw}")`);
    return value;
  };
  const flag = (name: string, fallback: boolean) => {
    const raw = env[name]?.trim().toLowerCase();
    if (!raw) return fallback;
    return ['1', 'true', 'yes'].includes(raw);
  };
  const list = (name: string, fallback: string) =>
    (env[name]?.trim() || fallback)
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  const duration = number('BENCH_DURATION', 10);
  return {
    durationSeconds: duration,
    warmupSeconds: number('BENCH_WARMUP', 2),
    connections: number('BENCH_CONNECTIONS', 32),
    growthConnections: number('BENCH_GROWTH_CONNECTIONS', 8),
    growthDurationSeconds: number('BENCH_GROWTH_DURATION', Math.max(2, Math.round(duration / 2))),
    mainSignals: number('BENCH_MAIN_SIGNALS', 20_000),
    mainAudiences: number('BENCH_MAIN_AUDIENCES', 2_000),
    growthSizes: list('BENCH_GROWTH_SIZES', '1000,100000,1000000').map(Number),
    only: list('BENCH_ONLY', ''),
    pin: flag('BENCH_PIN', true),
    reseed: flag('BENCH_RESEED', false),
    skipCeiling: flag('BENCH_SKIP_CEILING', false),
    skipGrowth: flag('BENCH_SKIP_GROWTH', false),
    floor: flag('BENCH_FLOOR', false),
    serviceNodeArgs: (env.BENCH_SERVICE_NODE_ARGS?.trim() || '').split(/\s+/).filter((arg) => arg !== ''),
    floorNodeArgs: (env.BENCH_FLOOR_NODE_ARGS?.trim() || '').split(/\s+/).filter((arg) => arg !== ''),
    serviceLogLevel: env.BENCH_LOG_LEVEL?.trim() || 'info',
    dataDir: resolve(REPO_ROOT, env.BENCH_DATA_DIR?.trim() || 'bench/.data'),
    resultsDir: resolve(REPO_ROOT, 'bench/results'),
    repoRoot: REPO_ROOT,
  };
}
