import type { AppConfig } from '../config/app-config.js';

/** Groups of jobs, for metrics and operators; not a unit of ordering (per-key ordering is `oneAtATimePerKey`). */
export enum QueueName {
  Maintenance = 'maintenance',
  Imports = 'imports',
  Memberships = 'memberships',
  Syncs = 'syncs',
  Webhooks = 'webhooks',
}

/**
 * What the job engine needs to know about one kind of job. `Payload` carries ids, never objects
 * (docs/architecture.md, "Jobs"): a retried or late job reads today's rows.
 */
export interface JobDefinition<Payload extends object = object> {
  /** The task identifier stored with each job; never rename one that may still be queued. */
  readonly name: string;
  readonly queue: QueueName | string;
  /** Tries before the job is failed for good; retries back off exponentially (about e^attempt seconds). */
  readonly maxAttempts: number;
  /** Jobs of one key run one at a time, in order, across every worker process (a sync per audience × destination). */
  readonly oneAtATimePerKey?: boolean;
  /**
   * One waiting job per key: a later enqueue replaces the waiting one (payload and run time), so a
   * burst of changes gives one run after the last of them (a membership recompute per audience).
   */
  readonly coalescePerKey?: boolean;
  /** Seconds an enqueue waits before it may run, unless it names `runAt` (with `coalescePerKey`: a trailing debounce). */
  readonly debounceSeconds?: (config: AppConfig) => number;
  /** A cron line (minute resolution) to enqueue it on, or undefined for none; read once at start. */
  readonly schedule?: (config: AppConfig) => string | undefined;
  /** Type-only: ties the definition to its payload. */
  readonly payload?: Payload;
}

export function defineJob<Payload extends object>(definition: Omit<JobDefinition<Payload>, 'payload'>): JobDefinition<Payload> {
  return definition;
}

/**
 * An interval in seconds as a cron line: whole minutes (at least one), and whole hours from an hour
 * up; cron counts from the top of the hour, so a step that does not divide it restarts there.
 */
export function cronEvery(seconds: number): string | undefined {
  if (seconds <= 0) return undefined;
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes < 60) return minutes === 1 ? '* * * * *' : `*/${minutes} * * * *`;
  const hours = Math.min(24, Math.round(minutes / 60));
  return hours === 1 ? '0 * * * *' : hours === 24 ? '0 0 * * *' : `0 */${hours} * * *`;
}

/** Every job of the service: its name, queue and how it is keyed. Handlers tie to these with @JobHandler. */
export const JOBS = {
  /** SPEC section 6: renews and checks OAuth grants. */
  connectionSweep: defineJob<Record<string, never>>({
    name: 'connections.sweep',
    queue: QueueName.Maintenance,
    // The next scheduled sweep is the retry; a failed one must not pile up behind it.
    maxAttempts: 1,
    schedule: (config) => cronEvery(config.adPlatforms.sweepIntervalSeconds),
  }),
  /** SPEC 10.1: merges one staged import into people; enqueued with the upload's last write. */
  importMerge: defineJob<{ customerId: number; importId: number }>({
    name: 'imports.merge',
    queue: QueueName.Imports,
    // A merge that fails marks its import failed and does not throw; a retry is for a worker that died mid-merge.
    maxAttempts: 3,
  }),
  /**
   * SPEC 10.2: recomputes one audience's members. Debounced per audience (a burst of changes gives
   * one run after the last) and one at a time per audience across workers.
   */
  membershipRecompute: defineJob<{ customerId: number; audienceId: number }>({
    name: 'memberships.recompute',
    queue: QueueName.Memberships,
    maxAttempts: 5,
    oneAtATimePerKey: true,
    coalescePerKey: true,
    debounceSeconds: (config) => config.membership.debounceSeconds,
  }),
  /** SPEC 10.2: a model instance turned ready or was retrained: its model audiences get a recompute. */
  membershipModelChanged: defineJob<{ customerId: number; modelInstanceId: number }>({
    name: 'memberships.model-changed',
    queue: QueueName.Memberships,
    maxAttempts: 5,
    coalescePerKey: true,
    debounceSeconds: (config) => config.membership.debounceSeconds,
  }),
  /**
   * SPEC 10.2: people of a workspace changed (written, imported, erased): every audience of it that
   * is not archived gets a recompute. Debounced per workspace, so a stream of batches is one fan-out.
   */
  membershipWorkspaceChanged: defineJob<{ customerId: number }>({
    name: 'memberships.workspace-changed',
    queue: QueueName.Memberships,
    maxAttempts: 5,
    coalescePerKey: true,
    debounceSeconds: (config) => config.membership.debounceSeconds,
  }),
  /** SPEC 10.2: the periodic recompute of active rules and model audiences (MEMBERSHIP_REFRESH_MINUTES). */
  membershipRefresh: defineJob<Record<string, never>>({
    name: 'memberships.refresh',
    queue: QueueName.Memberships,
    maxAttempts: 1,
    schedule: (config) => cronEvery(config.membership.refreshMinutes * 60),
  }),
  /**
   * SPEC 10.3: one sync run, keyed by its destination (audience × connection), so one run per
   * destination sends at a time across every worker. The run keeps its own tries and backoff
   * (SYNC_RETRY_BASE_SECONDS, Retry-After): a wait is a later job of the same key. The library's
   * retries are for a worker that died mid-run: the next try resumes from the last accepted batch.
   */
  syncRun: defineJob<{ customerId: number; runId: number }>({
    name: 'syncs.run',
    queue: QueueName.Syncs,
    maxAttempts: 5,
    oneAtATimePerKey: true,
  }),
  /** SPEC 10.3: asks Google for the verdict of a run's requests (`requestStatus:retrieve`), again later while it has none. */
  syncGoogleStatus: defineJob<{ customerId: number; runId: number }>({
    name: 'syncs.google-status',
    queue: QueueName.Syncs,
    maxAttempts: 5,
    coalescePerKey: true,
  }),
  /** SPEC 10.3: an audience's members changed; each destination of an active audience gets a run. Debounced per audience. */
  syncMembershipChanged: defineJob<{ customerId: number; audienceId: number }>({
    name: 'syncs.membership-changed',
    queue: QueueName.Syncs,
    maxAttempts: 5,
    coalescePerKey: true,
    debounceSeconds: (config) => config.sync.debounceSeconds,
  }),
  /** SPEC 10.3: every destination of an active audience not synced for SYNC_INTERVAL_HOURS gets a run; checked hourly. */
  syncSchedule: defineJob<Record<string, never>>({
    name: 'syncs.schedule',
    queue: QueueName.Syncs,
    maxAttempts: 1,
    schedule: (config) => (config.sync.intervalHours > 0 ? cronEvery(3600) : undefined),
  }),
  /**
   * SPEC 10.4: sends one signal's pending events to its platform. One at a time per signal across
   * workers, and one waiting job per signal: every accepted batch of events enqueues it, and a
   * burst of batches is one delivery. Platform retries are continuations it enqueues itself.
   */
  signalDelivery: defineJob<{ customerId: number; signalId: number }>({
    name: 'signals.deliver',
    queue: 'signal-delivery',
    // A delivery records what it sent and its platform retries in its rows and does not throw for
    // a platform's answer; a retry here is for a worker that died or a database that went away.
    maxAttempts: 5,
    oneAtATimePerKey: true,
    coalescePerKey: true,
  }),
  /** SPEC 10.4: held events older than 7 days expire; events older than the 30-day dedup window are deleted. */
  signalEventsMaintenance: defineJob<Record<string, never>>({
    name: 'signals.events-maintenance',
    queue: QueueName.Maintenance,
    maxAttempts: 1,
    schedule: () => '23 * * * *',
  }),
  /**
   * SPEC 10.5: one try of one webhook delivery. Its retries are continuation jobs with their own
   * runAt (WEBHOOK_RETRY_BASE_SECONDS doubling, for 24 hours), recorded in the delivery row; the
   * engine's own retry is only for a worker that died mid-try or a database error.
   */
  webhookDelivery: defineJob<{ customerId: number; deliveryId: number; attempt: number }>({
    name: 'webhooks.deliver',
    queue: QueueName.Webhooks,
    maxAttempts: 3,
  }),
} as const;

/** The key of a signal's delivery job: its workspace and id. */
export function signalDeliveryKey(customerId: number, signalId: number): string {
  return `${customerId}:${signalId}`;
}
