import { pino } from 'pino';
import { Transactions, entityManagerOf, type Transaction } from '../src/common/tenancy/transactions.js';
import { defineJob, type JobDefinition } from '../src/jobs/job-definitions.js';
import type { JobHandlerFunction } from '../src/jobs/job-handler.decorator.js';
import { LIVENESS_LOCK_CLASS } from '../src/jobs/job-queue.repository.js';
import { type JobRunner, startJobRunner } from '../src/jobs/job-runner.js';
import { Jobs } from '../src/jobs/jobs.service.js';
import { Metrics } from '../src/metrics/metrics.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * The job engine on the real library and PostgreSQL (SPEC section 10.6, docs/architecture.md
 * "Jobs"): jobs enqueued in the caller's transaction, retries with backoff, one at a time per key,
 * coalescing. The app is API-only (it enqueues); each test runs its handlers in a runner of its own.
 */
/** Polls `read` until `done` holds, failing after the deadline. */
async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, deadlineMs: number): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('jobs', () => {
  let api: TestApp;
  let runner: JobRunner | undefined;
  let metrics: Metrics;

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '0' });
    await api.dataSource.query('CREATE TABLE job_test_notes (id serial PRIMARY KEY, body text NOT NULL)');
  });

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
  });

  afterAll(() => api.close());

  async function run(jobs: [JobDefinition, JobHandlerFunction][], concurrency = 2): Promise<void> {
    metrics = new Metrics(() => undefined);
    runner = await startJobRunner({
      databaseUrl: api.databaseUrl,
      concurrency,
      pollIntervalMs: 100,
      rescueIntervalMs: 1000,
      shutdownTimeoutMs: 5000,
      jobs: jobs.map(([definition, handle]) => ({ definition, handle })),
      schedules: new Map(),
      logger: pino({ level: 'silent' }),
      metrics,
    });
  }

  function inTransaction<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return api.app.get(Transactions).run(work);
  }

  const queued = async (name: string): Promise<number> => {
    const [row] = await api.dataSource.query(
      'SELECT count(*)::int AS count FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = $1',
      [name],
    );
    return row.count;
  };

  it('enqueues nothing when the write rolls back, and runs the job of a committed write, which sees that write', async () => {
    const NOTE_JOB = defineJob<{ noteId: number }>({ name: 'test.note', queue: 'test', maxAttempts: 3 });
    const jobs = api.app.get(Jobs);
    const write = (transaction: Transaction, body: string) =>
      entityManagerOf(transaction).query('INSERT INTO job_test_notes (body) VALUES ($1) RETURNING id', [body]) as Promise<{ id: number }[]>;

    await expect(
      inTransaction(async (transaction) => {
        const [note] = await write(transaction, 'rolled back');
        await jobs.enqueue(transaction, NOTE_JOB, { noteId: note!.id });
        throw new Error('the write fails after its job was enqueued');
      }),
    ).rejects.toThrow('the write fails');
    expect(await queued(NOTE_JOB.name)).toBe(0);

    const noteId = await inTransaction(async (transaction) => {
      const [note] = await write(transaction, 'committed');
      await jobs.enqueue(transaction, NOTE_JOB, { noteId: note!.id });
      return note!.id;
    });
    expect(await queued(NOTE_JOB.name)).toBe(1);
    // An API-only process reports the depth too; a job JOBS does not list counts under `other`.
    const scrape = await (await api.request('/metrics')).text();
    expect(scrape).toContain('job_queue_depth{queue="other"} 1');
    expect(scrape).toContain('job_queue_depth{queue="maintenance"} 0');

    const seen: { noteId: number; body: string }[] = [];
    await run([
      [
        NOTE_JOB,
        async (payload) => {
          const { noteId: id } = payload as { noteId: number };
          const [note] = await api.dataSource.query('SELECT body FROM job_test_notes WHERE id = $1', [id]);
          seen.push({ noteId: id, body: note.body });
        },
      ],
    ]);
    await until(
      () => queued(NOTE_JOB.name),
      (count) => count === 0,
      10_000,
    );
    expect(seen).toEqual([{ noteId, body: 'committed' }]);
  });

  it('retries a failed job with backoff, then succeeds, and counts the retry', async () => {
    const FLAKY_JOB = defineJob<Record<string, never>>({ name: 'test.flaky', queue: 'test', maxAttempts: 3 });
    await inTransaction((transaction) => api.app.get(Jobs).enqueue(transaction, FLAKY_JOB, {}));
    const tries: { attempt: number; at: number }[] = [];
    await run([
      [
        FLAKY_JOB,
        async (_payload, context) => {
          tries.push({ attempt: context.attempt, at: Date.now() });
          if (context.attempt === 1) throw new Error('transient');
        },
      ],
    ]);
    await until(
      () => queued(FLAKY_JOB.name),
      (count) => count === 0,
      15_000,
    );
    expect(tries.map((attempt) => attempt.attempt)).toEqual([1, 2]);
    // The library waits e^attempts seconds: about 2.7 s after the first failure.
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(2_500);
    const retries = await metrics.jobRetries.get();
    expect(retries.values).toEqual([{ labels: { queue: 'test', job: 'test.flaky' }, value: 1 }]);
    const durations = await metrics.jobDuration.get();
    const counts = durations.values.filter((value) => value.metricName === 'job_duration_seconds_count');
    expect(counts.map((value) => [value.labels.outcome, value.value]).sort()).toEqual([
      ['failed', 1],
      ['succeeded', 1],
    ]);
  });

  it('runs the jobs of one key one at a time and in order, and different keys side by side', async () => {
    const SERIAL_JOB = defineJob<{ key: string; index: number }>({
      name: 'test.serial',
      queue: 'test',
      maxAttempts: 3,
      oneAtATimePerKey: true,
    });
    const jobs = api.app.get(Jobs);
    await inTransaction(async (transaction) => {
      for (let index = 0; index < 5; index++)
        for (const key of ['a', 'b']) await jobs.enqueue(transaction, SERIAL_JOB, { key, index }, { key });
    });
    const running = new Map<string, number>();
    let mostOfOneKey = 0;
    let mostAtOnce = 0;
    const order: Record<string, number[]> = { a: [], b: [] };
    await run(
      [
        [
          SERIAL_JOB,
          async (payload) => {
            const { key, index } = payload as { key: string; index: number };
            running.set(key, (running.get(key) ?? 0) + 1);
            mostOfOneKey = Math.max(mostOfOneKey, running.get(key)!);
            mostAtOnce = Math.max(
              mostAtOnce,
              [...running.values()].reduce((sum, count) => sum + count, 0),
            );
            await new Promise((resolve) => setTimeout(resolve, 100));
            order[key]!.push(index);
            running.set(key, running.get(key)! - 1);
          },
        ],
      ],
      4,
    );
    await until(
      () => order.a!.length + order.b!.length,
      (count) => count === 10,
      15_000,
    );
    expect(mostOfOneKey).toBe(1);
    expect(mostAtOnce).toBe(2);
    expect(order).toEqual({ a: [0, 1, 2, 3, 4], b: [0, 1, 2, 3, 4] });
  });

  it('coalesces a burst of enqueues for one key into one run, with the last payload, after the last enqueue', async () => {
    const RECOMPUTE_JOB = defineJob<{ audienceId: number; change: number }>({
      name: 'test.recompute',
      queue: 'test',
      maxAttempts: 3,
      coalescePerKey: true,
    });
    const jobs = api.app.get(Jobs);
    const runs: { audienceId: number; change: number; at: number }[] = [];
    await run([
      [RECOMPUTE_JOB, async (payload) => void runs.push({ ...(payload as { audienceId: number; change: number }), at: Date.now() })],
    ]);
    let lastEnqueue = 0;
    for (let change = 1; change <= 20; change++) {
      lastEnqueue = Date.now();
      await inTransaction((transaction) =>
        jobs.enqueue(transaction, RECOMPUTE_JOB, { audienceId: 7, change }, { key: '7', runAt: new Date(Date.now() + 1000) }),
      );
    }
    await inTransaction((transaction) => jobs.enqueue(transaction, RECOMPUTE_JOB, { audienceId: 8, change: 1 }, { key: '8' }));
    expect(await queued(RECOMPUTE_JOB.name)).toBeLessThanOrEqual(2);
    await until(
      () => queued(RECOMPUTE_JOB.name),
      (count) => count === 0,
      10_000,
    );
    const [seven, ...more] = runs.filter((payload) => payload.audienceId === 7);
    expect(more).toEqual([]);
    expect(seven).toMatchObject({ change: 20 });
    expect(seven!.at).toBeGreaterThanOrEqual(lastEnqueue + 900);
    expect(runs.filter((payload) => payload.audienceId === 8).map((payload) => payload.change)).toEqual([1]);
  });

  it("takes its liveness lock again when its session is lost, so its jobs are not taken as a dead process's", async () => {
    await run([]);
    const livenessLocks = () =>
      api.dataSource.query(
        "SELECT l.objid::bigint AS key, a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.classid = $1 AND a.datname = current_database()",
        [LIVENESS_LOCK_CLASS],
      ) as Promise<{ key: string; pid: number }[]>;
    const [before] = await livenessLocks();
    await api.dataSource.query('SELECT pg_terminate_backend($1)', [before!.pid]);
    const [after] = await until(livenessLocks, (locks) => locks.length === 1 && locks[0]!.pid !== before!.pid, 5_000);
    expect(after!.key).toBe(before!.key);
  });

  it('refuses a keyed job without its key', async () => {
    const SERIAL_JOB = defineJob<object>({ name: 'test.keyed', queue: 'test', maxAttempts: 1, oneAtATimePerKey: true });
    await expect(inTransaction((transaction) => api.app.get(Jobs).enqueue(transaction, SERIAL_JOB, {}))).rejects.toThrow('needs a key');
  });
});

describe('jobs in the application', () => {
  it('runs the service handlers in `npm start`: the token sweep is a scheduled job, counted in /metrics', async () => {
    const api = await startTestApp({ WORKER_CONCURRENCY: '1', CONNECTION_SWEEP_INTERVAL_SECONDS: '600' });
    try {
      // The library registers its cron lines just after the runner starts.
      const crontabs = await until(
        () => api.dataSource.query('SELECT identifier FROM graphile_worker._private_known_crontabs ORDER BY 1') as Promise<unknown[]>,
        (rows) => rows.length > 3,
        5_000,
      );
      // The sweep, the membership refresh (MEMBERSHIP_REFRESH_MINUTES, default 60), the hourly upkeep of signal events and the
      // hourly look for destinations due a sync (SYNC_INTERVAL_HOURS, default 24).
      expect(crontabs).toEqual([
        { identifier: 'connections.sweep' },
        { identifier: 'memberships.refresh' },
        { identifier: 'signals.events-maintenance' },
        { identifier: 'syncs.schedule' },
      ]);
      const { JOBS } = await import('../src/jobs/job-definitions.js');
      await api.app.get(Transactions).run((transaction) => api.app.get(Jobs).enqueue(transaction, JOBS.connectionSweep, {}));
      const deadline = Date.now() + 10_000;
      let text = '';
      while (!/job_duration_seconds_count\{queue="maintenance",job="connections.sweep",outcome="succeeded"\} 1/.test(text)) {
        if (Date.now() > deadline)
          throw new Error(
            `the sweep job did not run:\n${text
              .split('\n')
              .filter((line) => line.startsWith('job_'))
              .join('\n')}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
        text = await (await api.request('/metrics')).text();
      }
      expect(text).toContain('# TYPE job_queue_depth gauge');
    } finally {
      await api.close();
    }
  });

  it('schedules no sweep when CONNECTION_SWEEP_INTERVAL_SECONDS is 0, no refresh when MEMBERSHIP_REFRESH_MINUTES is 0, no sync look when SYNC_INTERVAL_HOURS is 0', async () => {
    const api = await startTestApp({
      WORKER_CONCURRENCY: '1',
      CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
      MEMBERSHIP_REFRESH_MINUTES: '0',
      SYNC_INTERVAL_HOURS: '0',
    });
    try {
      // Only the upkeep of signal events (SPEC 10.4: held events expire after 7 days, dedup rows go after 30) is always scheduled.
      const crontabs = await until(
        () => api.dataSource.query('SELECT identifier FROM graphile_worker._private_known_crontabs') as Promise<unknown[]>,
        (rows) => rows.length > 0,
        5_000,
      );
      expect(crontabs).toEqual([{ identifier: 'signals.events-maintenance' }]);
    } finally {
      await api.close();
    }
  });
});
