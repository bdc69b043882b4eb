import { type ChildProcess, spawn } from 'node:child_process';
import { Transactions } from '../src/common/tenancy/transactions.js';
import { defineJob, JOBS } from '../src/jobs/job-definitions.js';
import { Jobs } from '../src/jobs/jobs.service.js';
import { freePort, startTestApp, TEST_ENV, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * Jobs across processes (SPEC section 10.6): worker processes share the jobs an API-only process
 * enqueues; a killed worker's job is taken up by another; SIGTERM lets the running job finish.
 * The workers are test/support/job-worker-process.ts, the engine's runner with one test job.
 */
const RECORD_JOB = defineJob<{ n: number; ms: number }>({ name: 'test.record', queue: 'test', maxAttempts: 5 });
const ROOT = new URL('../', import.meta.url);

interface Worker {
  child: ChildProcess;
  exited: Promise<number | null>;
}

describe('job workers in several processes', () => {
  let database: TestDatabase;
  let api: TestApp;
  const workers: Worker[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.dataSource.query(
      'CREATE TABLE job_test_runs (n int NOT NULL, pid int NOT NULL, phase text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())',
    );
    api = await startTestApp({ DATABASE_URL: database.url, WORKER_CONCURRENCY: '0' });
  });

  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
    }
  });

  afterAll(async () => {
    await api.close();
    await database.drop();
  });

  async function startWorker(
    env: Record<string, string> = {},
    script = 'test/support/job-worker-process.ts',
    readyLine = 'ready',
  ): Promise<Worker> {
    const child = spawn(process.execPath, ['--import', './test/support/ts-loader.mjs', script], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const worker = { child, exited };
    workers.push(worker);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes(readyLine)) resolve();
      });
      void exited.then((code) => reject(new Error(`worker exited with ${code} before it was ready`)));
    });
    return worker;
  }

  async function enqueue(jobs: { n: number; ms: number }[]): Promise<void> {
    const queue = api.app.get(Jobs);
    await api.app.get(Transactions).run(async (transaction) => {
      for (const payload of jobs) await queue.enqueue(transaction, RECORD_JOB, payload);
    });
  }

  async function rows(sql: string, parameters: unknown[] = []): Promise<Record<string, unknown>[]> {
    return database.dataSource.query(sql, parameters);
  }

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, deadlineMs: number): Promise<T> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('shares the jobs an API-only process enqueues between two worker processes', async () => {
    const [first, second] = await Promise.all([startWorker(), startWorker()]);
    await enqueue(Array.from({ length: 40 }, (_, index) => ({ n: index, ms: 50 })));
    const ended = await until(
      () => rows("SELECT n, pid FROM job_test_runs WHERE phase = 'end' AND n < 40"),
      (found) => found.length >= 40,
      20_000,
    );
    expect(new Set(ended.map((row) => row.n)).size).toBe(40);
    const byProcess = new Set(ended.map((row) => row.pid));
    expect(byProcess).toEqual(new Set([first.child.pid, second.child.pid]));
    expect(byProcess.has(process.pid)).toBe(false);
  });

  it("takes up a killed worker's job on another worker", async () => {
    const candidates = await Promise.all([startWorker(), startWorker()]);
    await enqueue([{ n: 100, ms: 1500 }]);
    const [started] = await until(
      () => rows("SELECT pid FROM job_test_runs WHERE n = 100 AND phase = 'start'"),
      (found) => found.length === 1,
      10_000,
    );
    const victim = candidates.find((worker) => worker.child.pid === started!.pid)!;
    const survivor = candidates.find((worker) => worker !== victim)!;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    const [ended] = await until(
      () => rows("SELECT pid FROM job_test_runs WHERE n = 100 AND phase = 'end'"),
      (found) => found.length === 1,
      15_000,
    );
    expect(ended!.pid).toBe(survivor.child.pid);
    // The rescue runs every 500 ms here; the job's own 1.5 s is the rest.
    expect(Date.now() - killedAt).toBeLessThan(6_000);
  });

  it('lets the running job finish on SIGTERM, then exits 0', async () => {
    const worker = await startWorker({ WORKER_CONCURRENCY: '1' });
    await enqueue([{ n: 200, ms: 1000 }]);
    await until(
      () => rows("SELECT 1 FROM job_test_runs WHERE n = 200 AND phase = 'start'"),
      (found) => found.length === 1,
      10_000,
    );
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(await rows("SELECT 1 FROM job_test_runs WHERE n = 200 AND phase = 'end'")).toHaveLength(1);
    expect(await rows("SELECT 1 FROM graphile_worker._private_jobs WHERE payload->>'n' = '200'")).toHaveLength(0);
  });

  it("audience-worker runs the service's jobs, counts them on its metrics port, and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const worker = await startWorker(
      { ...TEST_ENV, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '1', WORKER_METRICS_PORT: String(port) },
      'src/cli/audience-worker.ts',
      'audience-worker ready',
    );
    await api.app.get(Transactions).run((transaction) => api.app.get(Jobs).enqueue(transaction, JOBS.connectionSweep, {}));
    await until(
      () =>
        rows(
          "SELECT 1 FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'connections.sweep'",
        ),
      (found) => found.length === 0,
      10_000,
    );
    const scrape = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(scrape).toContain('job_duration_seconds_count{queue="maintenance",job="connections.sweep",outcome="succeeded"} 1');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});
