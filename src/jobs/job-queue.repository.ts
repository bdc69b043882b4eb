import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { entityManagerOf, type Transaction } from '../common/tenancy/transactions.js';

/** The library's schema (graphile-worker's default), named once for our SQL. */
export const JOB_SCHEMA = 'graphile_worker';

/**
 * The first key of the advisory locks by which a worker process says it is alive (the second is
 * the process's own key): PostgreSQL drops a session's locks the moment the session ends, so a
 * killed process's jobs are found without any timeout.
 */
export const LIVENESS_LOCK_CLASS = 0x6a6f6273;

export interface NewJob {
  name: string;
  payload: object;
  /** graphile-worker's queue_name: jobs sharing one run one at a time. */
  serialQueue: string | null;
  /** graphile-worker's job_key: at most one waiting job per key, replaced by the next enqueue. */
  jobKey: string | null;
  runAt: Date | null;
  maxAttempts: number;
}

/** One job added (`newJob` in jobs.service.ts): named here for the repository and for the benchmark's framework floor (bench/), which enqueues alike. */
export const ADD_JOB_SQL = `SELECT id::text AS id FROM ${JOB_SCHEMA}.add_job($1, $2::json, queue_name => $3, run_at => $4, max_attempts => $5, job_key => $6, job_key_mode => 'replace')`;

export function addJobParameters(job: NewJob): unknown[] {
  return [job.name, JSON.stringify(job.payload), job.serialQueue, job.runAt, job.maxAttempts, job.jobKey];
}

/** The job engine's SQL: enqueueing in the caller's transaction, liveness, rescue and queue depth. */
@Injectable()
export class JobQueueRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** `graphile_worker.add_job` on the caller's transaction: the job commits or rolls back with the write that caused it. */
  async add(transaction: Transaction, job: NewJob): Promise<string> {
    const rows: { id: string }[] = await entityManagerOf(transaction).query(ADD_JOB_SQL, addJobParameters(job));
    return rows[0]!.id;
  }

  /**
   * Several jobs of one kind in one statement on the caller's transaction (a webhook event's
   * deliveries, one per endpoint): the same `add_job` per payload, without a round trip each.
   */
  async addMany(transaction: Transaction, job: Omit<NewJob, 'payload'>, payloads: readonly object[]): Promise<string[]> {
    if (payloads.length === 0) return [];
    const rows: { id: string }[] = await entityManagerOf(transaction).query(
      `SELECT (${JOB_SCHEMA}.add_job($1, p.payload, queue_name => $3, run_at => $4, max_attempts => $5, job_key => $6, job_key_mode => 'replace')).id::text AS id
       FROM unnest($2::json[]) WITH ORDINALITY AS p(payload, n) ORDER BY p.n`,
      [job.name, payloads.map((payload) => JSON.stringify(payload)), job.serialQueue, job.runAt, job.maxAttempts, job.jobKey],
    );
    return rows.map((row) => row.id);
  }

  /** Jobs waiting or running, by task name (failed-for-good jobs excluded): any process can read it, workers or not. */
  async countsByTask(): Promise<Map<string, number>> {
    const rows: { task: string; count: string }[] = await this.dataSource.query(
      `SELECT t.identifier AS task, count(*)::text AS count
       FROM ${JOB_SCHEMA}._private_jobs j JOIN ${JOB_SCHEMA}._private_tasks t ON t.id = j.task_id
       WHERE j.attempts < j.max_attempts OR j.locked_at IS NOT NULL
       GROUP BY t.identifier`,
    );
    return new Map(rows.map((row) => [row.task, Number(row.count)]));
  }
}

/** Takes this process's liveness lock on a session it keeps open; false when another process has the key. */
export async function takeLivenessLock(client: pg.Client, processKey: number): Promise<boolean> {
  const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [
    LIVENESS_LOCK_CLASS,
    processKey,
  ]);
  return rows[0]!.taken;
}

/**
 * Unlocks the jobs and per-key queues held by workers whose process no longer holds its liveness
 * lock (killed, or its database session lost), so another worker takes them up at once instead of
 * after the library's fixed four hours. Worker ids are `jobs-<process key>-<n>`.
 */
export async function rescueJobsOfDeadWorkers(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ worker: string }>(
    `WITH alive AS (
       SELECT objid::bigint AS process_key FROM pg_locks
       WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
     ),
     held AS (
       SELECT locked_by FROM ${JOB_SCHEMA}._private_jobs WHERE locked_by LIKE 'jobs-%'
       UNION SELECT locked_by FROM ${JOB_SCHEMA}._private_job_queues WHERE locked_by LIKE 'jobs-%'
     )
     SELECT locked_by AS worker FROM held
     WHERE split_part(locked_by, '-', 2)::bigint NOT IN (SELECT process_key FROM alive)`,
    [LIVENESS_LOCK_CLASS],
  );
  const workers = rows.map((row) => row.worker);
  if (workers.length > 0) await pool.query(`SELECT ${JOB_SCHEMA}.force_unlock_workers($1::text[])`, [workers]);
  return workers;
}
