import { randomInt } from 'node:crypto';
import { Logger as GraphileLogger, parseCronItems, run, type Runner, type RunnerOptions, type Task } from 'graphile-worker';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { JobDefinition } from './job-definitions.js';
import type { JobHandlerFunction } from './job-handler.decorator.js';
import { rescueJobsOfDeadWorkers, takeLivenessLock } from './job-queue.repository.js';

export interface RegisteredJob {
  definition: JobDefinition;
  handle: JobHandlerFunction;
}

export interface JobRunnerOptions {
  databaseUrl: string;
  /** Jobs this process runs at once; each has a worker of its own (its own worker id). */
  concurrency: number;
  /** The fallback poll; new jobs arrive at once through LISTEN/NOTIFY. */
  pollIntervalMs: number;
  /** How often to look for jobs held by a worker process that is gone. */
  rescueIntervalMs: number;
  /** How long a stopping worker lets its running jobs finish before it signals them to abort. */
  shutdownTimeoutMs: number;
  jobs: readonly RegisteredJob[];
  /** Cron lines by job name; only jobs with a handler here are scheduled. */
  schedules: ReadonlyMap<string, string>;
  logger: Logger;
  metrics?: Metrics;
}

export interface JobRunner {
  /** Stops taking jobs, lets the running ones finish, then releases the database. */
  stop(): Promise<void>;
}

/**
 * Runs jobs with graphile-worker (docs/architecture.md, "Jobs"). The library gives each worker a
 * random id unless it runs alone, and keeps a crashed worker's jobs locked for four hours; so each
 * of the `concurrency` workers is a runner of its own with the id `jobs-<process key>-<n>`, and the
 * process holds an advisory lock on that key for its lifetime: any worker can then tell a dead
 * process's jobs from a live one's and unlock them (rescueJobsOfDeadWorkers).
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  const { logger, metrics } = options;
  const liveness = new Liveness(options.databaseUrl, logger);
  await liveness.start();
  const processKey = liveness.processKey;

  // Per worker: a LISTEN connection and one for the job's own statements; plus one for rescue and depth.
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.concurrency * 2 + 1, application_name: 'audience-jobs' });
  pool.on('error', (error) => logger.warn({ err: error }, 'job pool connection lost'));
  const taskList: Record<string, Task> = {};
  for (const job of options.jobs) taskList[job.definition.name] = taskOf(job, logger, metrics);
  const cronItems = parseCronItems(
    [...options.schedules].filter(([name]) => name in taskList).map(([name, match]) => ({ task: name, match, identifier: name })),
  );
  const graphileLogger = new GraphileLogger((scope) => (level, message, meta) => {
    // The library logs every completed job at info: ours are the per-job lines that matter.
    const line = { ...scope, ...meta };
    if (level === 'error') logger.error(line, message);
    else if (level === 'warning') logger.warn(line, message);
    else logger.debug(line, message);
  });

  const runners: Runner[] = [];
  for (let index = 0; index < options.concurrency; index++) {
    runners.push(
      // run() honours workerId for a runner of one worker, though RunnerOptions does not declare it.
      await run({
        pgPool: pool,
        concurrency: 1,
        workerId: `jobs-${processKey}-${index}`,
        noHandleSignals: true,
        pollInterval: options.pollIntervalMs,
        gracefulShutdownAbortTimeout: options.shutdownTimeoutMs,
        logger: graphileLogger,
        taskList,
        // Every process registers the same cron lines; the library enqueues each tick once.
        parsedCronItems: index === 0 ? cronItems : [],
      } as RunnerOptions),
    );
  }

  const rescue = async () => {
    await liveness.restore();
    const workers = await rescueJobsOfDeadWorkers(pool);
    if (workers.length > 0) logger.warn({ workers }, 'took back the jobs of worker processes that are gone');
  };
  const rescueTimer = setInterval(
    () => rescue().catch((error: unknown) => logger.warn({ err: error }, 'job rescue failed')),
    options.rescueIntervalMs,
  );
  rescueTimer.unref();
  await rescue();
  logger.info({ concurrency: options.concurrency, jobs: Object.keys(taskList) }, 'job workers started');

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(rescueTimer);
        await Promise.all(runners.map((runner) => runner.stop()));
        await pool.end();
        await liveness.end();
      })();
      return stopped;
    },
  };
}

/** The library's task for one handler: the payload and attempt in, duration, retries and failures out to the metrics. */
function taskOf({ definition, handle }: RegisteredJob, logger: Logger, metrics: Metrics | undefined): Task {
  const labels = { queue: String(definition.queue), job: definition.name };
  return async (payload, helpers) => {
    const { job } = helpers;
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      await handle((payload ?? {}) as object, { jobId: String(job.id), attempt: job.attempts, maxAttempts: job.max_attempts });
      metrics?.jobDuration.observe({ ...labels, outcome: 'succeeded' }, seconds());
    } catch (error) {
      const final = job.attempts >= job.max_attempts;
      metrics?.jobDuration.observe({ ...labels, outcome: 'failed' }, seconds());
      (final ? metrics?.jobFailures : metrics?.jobRetries)?.inc(labels);
      logger.warn({ err: error, job: definition.name, job_id: String(job.id), attempt: job.attempts, final }, 'job failed');
      throw error;
    }
  };
}

/**
 * This process's liveness lock, on a session of its own. A lost session (database restart, network)
 * is logged and taken again with the same key at the next rescue: meanwhile other workers may
 * free this process's jobs and run them a second time, which every job must bear anyway.
 */
class Liveness {
  processKey = 0;
  private client: pg.Client | undefined;
  private ending = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const client = await this.connect();
    for (let tries = 0; this.processKey === 0 && tries < 10; tries++) {
      const candidate = randomInt(1, 2 ** 31 - 1);
      if (await takeLivenessLock(client, candidate)) this.processKey = candidate;
    }
    if (this.processKey === 0) throw new Error('no free worker process key');
  }

  /** Takes the lock again on a new session when the last one was lost. */
  async restore(): Promise<void> {
    if (this.client || this.ending) return;
    const client = await this.connect();
    if (!(await takeLivenessLock(client, this.processKey)))
      this.logger.error({ processKey: this.processKey }, 'worker liveness lock held by another session');
    else this.logger.warn({ processKey: this.processKey }, 'worker liveness lock taken again');
  }

  async end(): Promise<void> {
    this.ending = true;
    await this.client?.end();
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'audience-jobs-liveness' });
    const lost = (error?: Error) => {
      if (this.client !== client || this.ending) return;
      this.client = undefined;
      this.logger.error({ err: error }, "worker liveness session lost; other workers may take up this process's jobs");
      void client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    this.client = client;
    return client;
  }
}
