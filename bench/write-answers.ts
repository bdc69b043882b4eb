import { ADD_JOB_SQL, addJobParameters } from '../src/jobs/job-queue.repository.js';
import { JOBS, signalDeliveryKey } from '../src/jobs/job-definitions.js';
import { newJob } from '../src/jobs/jobs.service.js';
import { PEOPLE_BATCH_SQL, upsertRecords } from '../src/people/people.repository.js';
import { MAX_BATCH_PEOPLE, mergeBatch, readBatch, type StoredPerson } from '../src/people/person-write.js';
import { MAX_EVENTS_PER_REQUEST, readSignalEvents } from '../src/signal-events/signal-event-input.js';
import { INSERT_EVENTS_SQL, insertEventsParameters } from '../src/signal-events/signal-events.repository.js';
import { SignalStatus } from '../src/signals/signal.entity.js';
import { BenchProblem, type RunQuery, SIGNAL_WRITE_STATEMENTS } from './read-answers.js';

/**
 * The data plane's write scenarios (the people batch, SPEC 10.1; a signal's events, SPEC 10.4),
 * written once for the ceiling (bench/ceiling.ts) and the floor (bench/floor.ts). What makes the
 * work the service's is taken from the service itself: reading and normalising each row or event
 * (src/people/person-write.ts, src/signal-events/signal-event-input.ts, the same hashing), the
 * statements (exported by the repositories that send them) and the job each write enqueues. What
 * is left out is the service's own frame: DTO validation, idempotency keys, the tenant context,
 * the transaction helper, logging and metrics.
 */

/** Runs `work` in one transaction of one pooled connection: committed when it returns, rolled back when it throws. */
export type InTransaction = <T>(work: (query: RunQuery) => Promise<T>) => Promise<T>;

/** The service enqueues a batch's recompute MEMBERSHIP_DEBOUNCE_SECONDS ahead (default 5); the benchmark gives all three servers the same. */
const MEMBERSHIP_DEBOUNCE_MS = Number(process.env.MEMBERSHIP_DEBOUNCE_SECONDS ?? 5) * 1000;
const SIGNAL_ID = /^[1-9]\d{0,9}$/;

const CONNECTION_BY_ID =
  `SELECT t."customer_id" AS "customerId", t."id" AS "id", t."created_at" AS "createdAt", t."updated_at" AS "updatedAt", t."platform" AS "platform", ` +
  `t."external_account_id" AS "externalAccountId", t."account_name" AS "accountName", t."status" AS "status", t."status_reason" AS "statusReason", ` +
  `t."scopes" AS "scopes", t."customer_match_terms_accepted" AS "customerMatchTermsAccepted", t."connected_by" AS "connectedBy", ` +
  `t."token_expires_at" AS "tokenExpiresAt", t."last_refreshed_at" AS "lastRefreshedAt" FROM "connections" t WHERE t.customer_id = $1 AND t."id" = $2`;

/** Every statement the write scenarios send, for the servers to name at start as the service names its own. */
export const WRITE_STATEMENTS = [SIGNAL_WRITE_STATEMENTS.read, CONNECTION_BY_ID];

/** `body[field]` when it is an array of 1 to `max` items; else the 400 the service's DTO validation gives. */
function rowsOf(body: unknown, field: string, max: number): unknown[] {
  const rows = (body as Record<string, unknown> | null | undefined)?.[field];
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > max)
    throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', { [field]: [`Must be a list of 1 to ${max} items.`] });
  return rows;
}

export class WriteAnswers {
  constructor(
    private readonly query: RunQuery,
    private readonly transaction: InTransaction,
  ) {}

  /** `POST /api/v1/people/batch/`: PeopleService.batch's steps, statements and answer. */
  async peopleBatch(customerId: number, body: unknown) {
    const reading = readBatch(rowsOf(body, 'people', MAX_BATCH_PEOPLE));
    let created = 0;
    let applied = 0;
    if (reading.accepted.length > 0) {
      await this.transaction(async (query) => {
        const stored = (await query(PEOPLE_BATCH_SQL.lock, [customerId, reading.externalIds])) as unknown as StoredPerson[];
        const rows = mergeBatch(reading, new Map(stored.map((row) => [row.externalId, row])));
        const written =
          rows.length === 0 ? [] : await query(PEOPLE_BATCH_SQL.upsert, [customerId, upsertRecords(rows.map((row) => row.columns))]);
        created = written.filter((row) => row.inserted).length;
        applied = rows.length;
        if (applied > 0) {
          const runAt = new Date(Date.now() + MEMBERSHIP_DEBOUNCE_MS);
          await query(
            ADD_JOB_SQL,
            addJobParameters(newJob(JOBS.membershipWorkspaceChanged, { customerId }, { key: String(customerId), runAt })),
          );
        }
      });
    }
    return { created, updated: applied - created, rejected: reading.rejected.sort((a, b) => a.index - b.index) };
  }

  /** `POST /api/v1/signals/{id}/events/`: SignalEventsService.accept's steps, statements and answer. */
  async signalEvents(customerId: number, idText: string, body: unknown) {
    const signalId = SIGNAL_ID.test(idText) ? Number(idText) : null;
    const signal = signalId === null ? undefined : (await this.query(SIGNAL_WRITE_STATEMENTS.read, [customerId, signalId]))[0];
    if (signal === undefined || signalId === null) throw new BenchProblem(404, 'not_found', 'Not found.');
    refuseClosed(signal.status as number);
    const input = rowsOf(body, 'events', MAX_EVENTS_PER_REQUEST);
    const connection =
      signal.connectionId === null ? undefined : (await this.query(CONNECTION_BY_ID, [customerId, signal.connectionId]))[0];
    const platform = (connection?.platform ?? null) as 'google_ads' | 'meta_ads' | null;
    const config = signal.config as Record<string, unknown>;
    const actionSource = platform === 'meta_ads' && typeof config.action_source === 'string' ? config.action_source : null;
    const { rows, rejected, repeated } = readSignalEvents(input, { platform, metaActionSource: actionSource, now: Date.now() });
    const accepted = await this.transaction(async (query) => {
      const current = (await query(SIGNAL_WRITE_STATEMENTS.read, [customerId, signalId]))[0];
      if (current === undefined) throw new BenchProblem(404, 'not_found', 'Not found.');
      refuseClosed(current.status as number);
      const status = current.status === SignalStatus.active ? 'pending' : 'held';
      const inserted =
        rows.length === 0 ? 0 : (await query(INSERT_EVENTS_SQL, [customerId, ...insertEventsParameters(signalId, rows, status)])).length;
      if (inserted > 0 && status === 'pending') {
        const job = newJob(
          JOBS.signalDelivery,
          { customerId, signalId },
          { key: signalDeliveryKey(customerId, signalId), runAt: new Date() },
        );
        await query(ADD_JOB_SQL, addJobParameters(job));
      }
      return inserted;
    });
    return { accepted, duplicates: rows.length - accepted + repeated, rejected };
  }
}

function refuseClosed(status: number): void {
  if (status === SignalStatus.draft) throw new BenchProblem(409, 'conflict', 'This signal is a draft: activate it before sending events.');
  if (status === SignalStatus.archived) throw new BenchProblem(409, 'conflict', 'This signal is archived and takes no events.');
}
