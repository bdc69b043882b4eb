import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { note } from './progress.js';

/** The data plane's scenarios (SPEC 10.1, 10.2), each a script of its own that starts the built service. */
export interface DataPlaneSizes {
  /** Rows of the generated CSV of the import scenario (bench/imports.ts); 0 skips it. */
  importRows: number;
  /** People of the membership scenario (bench/memberships.ts); 0 skips it. */
  people: number;
  /** Events of the signal events scenario (bench/signal-events.ts, SPEC 10.4); 0 skips it. */
  signalEvents: number;
  /** Members of the sync scenario (bench/syncs.ts, SPEC 10.3); 0 skips it. */
  syncMembers: number;
}

/**
 * BENCH_IMPORT_ROWS, BENCH_PEOPLE and BENCH_SYNC_MEMBERS (default 1,000,000 each), BENCH_SIGNAL_EVENTS
 * (default 100,000); 0 skips one, BENCH_DATA_PLANE=0 all.
 */
export function dataPlaneSizes(env: NodeJS.ProcessEnv = process.env): DataPlaneSizes {
  if (env.BENCH_DATA_PLANE === '0') return { importRows: 0, people: 0, signalEvents: 0, syncMembers: 0 };
  const size = (name: string, fallback = 1_000_000) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of rows`);
    return value;
  };
  return {
    importRows: size('BENCH_IMPORT_ROWS'),
    people: size('BENCH_PEOPLE'),
    signalEvents: size('BENCH_SIGNAL_EVENTS', 100_000),
    syncMembers: size('BENCH_SYNC_MEMBERS'),
  };
}

/**
 * Runs the import and membership scenarios one after the other against the PostgreSQL server
 * `serverUrl` names (each makes a database of its own there, so the embedded cluster of
 * `npm run bench` serves them too), and writes their reports beside the main one.
 */
export function runDataPlane(serverUrl: string, sizes: DataPlaneSizes, resultsDir: string, date: string): Record<string, unknown> {
  const env = { ...process.env, DATABASE_URL: serverUrl };
  const results: Record<string, unknown> = {};
  // A scenario's report is the JSON it prints last; the service it starts may print before it.
  const run = (script: string, args: string[]) => {
    const out = execFileSync(process.execPath, [join('dist', 'bench', script), ...args], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const start = out.lastIndexOf('\n{\n');
    return JSON.parse(out.slice(start >= 0 ? start + 1 : 0)) as unknown;
  };
  if (sizes.importRows > 0) {
    note(`data plane: import of ${sizes.importRows} rows…`);
    results.imports = run('imports.js', ['--rows', String(sizes.importRows)]);
  }
  if (sizes.people > 0) {
    note(`data plane: membership recomputes over ${sizes.people} people…`);
    results.memberships = run('memberships.js', ['--people', String(sizes.people)]);
  }
  if (sizes.signalEvents > 0) {
    note(`data plane: ${sizes.signalEvents} signal events accepted and delivered…`);
    results.signalEvents = run('signal-events.js', ['--events', String(sizes.signalEvents)]);
  }
  if (sizes.syncMembers > 0) {
    note(`data plane: first and 5%-churn syncs of ${sizes.syncMembers} members to each platform…`);
    results.syncs = run('syncs.js', ['--members', String(sizes.syncMembers)]);
  }
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `data-plane-${date.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(results, null, 2)}\n`);
  return results;
}

/** `node dist/bench/data-plane.js`: the data plane's scenarios alone, on DATABASE_URL's server or else an embedded one. */
async function main(): Promise<void> {
  const { openBenchDatabase } = await import('./database.js');
  const { readSettings } = await import('./settings.js');
  const settings = readSettings();
  const database = await openBenchDatabase(settings.dataDir);
  try {
    const results = runDataPlane(database.url, dataPlaneSizes(), settings.resultsDir, new Date().toISOString());
    process.stdout.write(`${JSON.stringify({ database: database.description, ...results }, null, 2)}\n`);
  } finally {
    await database.close();
  }
}

if (process.argv[1]?.endsWith('data-plane.js')) await main();
