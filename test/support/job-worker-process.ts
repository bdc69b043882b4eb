import pg from 'pg';
import { pino } from 'pino';
import { defineJob } from '../../src/jobs/job-definitions.js';
import { startJobRunner } from '../../src/jobs/job-runner.js';

/**
 * A worker process for the job tests (test/job-workers.e2e-spec.ts), run with ts-loader.mjs: the
 * engine's own runner with one test job, and the shutdown that audience-worker does (SIGTERM: the
 * running job finishes, then exit 0). `test.record` writes a row when it starts and when it ends.
 */
export const RECORD_JOB = defineJob<{ n: number; ms: number }>({ name: 'test.record', queue: 'test', maxAttempts: 5 });

const url = process.env.DATABASE_URL!;
const client = new pg.Client({ connectionString: url });
await client.connect();
const record = (n: number, phase: string) =>
  client.query('INSERT INTO job_test_runs (n, pid, phase) VALUES ($1, $2, $3)', [n, process.pid, phase]);

const runner = await startJobRunner({
  databaseUrl: url,
  concurrency: Number(process.env.WORKER_CONCURRENCY ?? 2),
  pollIntervalMs: 200,
  rescueIntervalMs: Number(process.env.JOB_RESCUE_INTERVAL_MS ?? 500),
  shutdownTimeoutMs: 10_000,
  jobs: [
    {
      definition: RECORD_JOB,
      handle: async (payload) => {
        const { n, ms } = payload as { n: number; ms: number };
        await record(n, 'start');
        await new Promise((resolve) => setTimeout(resolve, ms));
        await record(n, 'end');
      },
    },
  ],
  schedules: new Map(),
  logger: pino({ level: 'silent' }),
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void runner
    .stop()
    .then(() => client.end())
    .then(() => process.exit(0));
});
