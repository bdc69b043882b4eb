import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AudienceDestinationsRepository, type DestinationUpdate } from '../audiences/audience-destinations.repository.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { lacksDataManagerScope } from '../connections/connection-readiness.js';
import type { Connection } from '../connections/connection.entity.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { ConnectionGrants } from '../connections/oauth/connection-grants.js';
import { PlatformError } from '../connections/oauth/platforms/ad-platform-client.js';
import type { DestinationFailure, DestinationOutcome, RefusalReason } from '../destinations/destination-types.js';
import { GoogleDataManagerClient } from '../destinations/google-data-manager.client.js';
import { MetaCustomAudiencesClient } from '../destinations/meta-custom-audiences.client.js';
import { retryDelaySeconds } from '../destinations/retry-schedule.js';
import { JOBS } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';
import { Metrics } from '../metrics/metrics.js';
import { DestinationSender, type SendContext } from './destination-sender.js';
import { type DiffScope, SyncMembersRepository } from './sync-members.repository.js';
import { type PendingGoogleRequest, type SyncRun, type SyncStatus } from './sync-run.entity.js';
import { PlatformRateBudget } from './platform-rate-budget.js';
import { RunDeferred, RunStopped, type SyncErrorCode } from './sync-outcome.js';
import { syncTenant } from './sync-tenant.js';
import { toSyncRunDto } from './sync-run.mapper.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import { SyncsRepository } from './syncs.repository.js';

/** A wait longer than this is not slept through in the job: the run continues in a later job. */
const LONGEST_IN_JOB_WAIT_SECONDS = 60;
/** Tokens of the shared rate budget a run books at once (see `budget`). */
const BUDGET_BOOKING = 10;
/** Google verdict polls before a run is closed without one. */
const MAX_STATUS_POLLS = 12;

const REFUSAL_CODES: Partial<Record<RefusalReason, SyncErrorCode>> = {
  terms_not_accepted: 'terms_not_accepted',
  audience_flagged: 'audience_flagged',
  not_found: 'not_found',
  permission_denied: 'permission_denied',
  invalid_request: 'invalid_request',
};

/**
 * Runs syncs (SPEC 10.3): the job of one run, from the diff to the platform and back, the Google
 * verdict polls, and the triggers (membership changes, the schedule). One run per destination at a
 * time across workers is the job library's (JOBS.syncRun is one at a time per destination); what
 * is accepted is recorded per batch, so a run killed half-way resumes from the diff, which no
 * longer holds what was accepted.
 */
@Injectable()
export class SyncRunner {
  private readonly google: GoogleDataManagerClient;
  private readonly meta: MetaCustomAudiencesClient;
  /** Tokens each run in this process has booked from the shared budget and not spent yet. */
  private readonly booked = new WeakMap<SyncRun, number>();

  constructor(
    private readonly runs: SyncsRepository,
    private readonly members: SyncMembersRepository,
    private readonly budgets: PlatformRateBudget,
    private readonly destinations: AudienceDestinationsRepository,
    private readonly audiences: AudiencesRepository,
    private readonly connections: ConnectionsRepository,
    private readonly grants: ConnectionGrants,
    private readonly transactions: Transactions,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly metrics: Metrics,
    private readonly webhooks: WebhookEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.google = GoogleDataManagerClient.fromConfig(config);
    this.meta = MetaCustomAudiencesClient.fromConfig(config);
  }

  @JobHandler(JOBS.syncRun)
  async runJob(payload: { customerId: number; runId: number }): Promise<void> {
    await this.tenants.run(syncTenant(payload.customerId), () => this.run(payload.runId));
  }

  @JobHandler(JOBS.syncGoogleStatus)
  async googleStatusJob(payload: { customerId: number; runId: number }): Promise<void> {
    await this.tenants.run(syncTenant(payload.customerId), () => this.pollGoogle(payload.runId));
  }

  /** One run, from wherever it stands: a resumed run reads the diff again and sends what is still missing. */
  async run(runId: number): Promise<void> {
    let run = await this.runs.findById(runId);
    if (run === null || (run.status !== 'queued' && run.status !== 'running')) return;
    const started = Date.now();
    try {
      run = await this.start(run);
      const connection = await this.usableConnection(run);
      const scope: DiffScope = {
        audienceId: run.audienceId,
        connectionId: run.connectionId,
        platform: connection.platform === 'google_ads' ? 'google' : 'meta',
      };
      const plan = await this.members.plan(scope);
      // A resumed run keeps what it planned at its first start; its plan now is what is left of it.
      const planned = {
        plannedAdd: run.plannedAdd ?? plan.plannedAdd,
        plannedRemove: run.plannedRemove ?? plan.plannedRemove,
        skippedConsent: plan.skippedConsent,
        skippedUnmatchable: plan.skippedUnmatchable,
      };
      await this.runs.save(Object.assign(run, planned));
      if (run.dryRun) {
        await this.finish(run, 'succeeded');
        return;
      }
      const accessToken = await this.accessToken(connection);
      const context: SendContext = {
        run,
        scope,
        connection,
        accessToken,
        google: this.google,
        meta: this.meta,
        call: (request) => this.call(run!, connection, request),
        progress: (change) => this.progress(run!, change),
        stopFor: (failure) => this.stopFor(failure),
      };
      const sender = new DestinationSender(context, this.members, this.metrics);
      const platformAudienceId = await this.platformAudience(run, connection, accessToken);
      await sender.sendAll(platformAudienceId, plan);
      if (run.pendingRequests.length > 0) {
        run.status = 'awaiting_platform';
        await this.runs.save(run);
        await this.destinationAfter(run, await this.members.sentCount(run), {});
        await this.scheduleGooglePoll(run, this.config.sync.googleStatusPollDelaySeconds);
      } else {
        await this.finish(run, outcomeOf(run));
      }
    } catch (error) {
      if (error instanceof RunDeferred) {
        await this.transactions.run(async (transaction) => {
          await this.runs.save(run!, transaction);
          await this.jobs.enqueue(
            transaction,
            JOBS.syncRun,
            { customerId: run!.customerId, runId: run!.id },
            {
              key: destinationKey(run!),
              runAt: new Date(Date.now() + error.seconds * 1000),
            },
          );
        });
        return;
      }
      if (error instanceof RunStopped) {
        run.errorCode = error.code;
        run.errorDetail = error.detail;
        await this.finish(run, error.status);
        return;
      }
      throw error;
    } finally {
      this.logger.info({ run_id: runId, customer: run.customerId, status: run.status, ms: Date.now() - started }, 'sync run step');
    }
  }

  /** The run marked running (one more start), after checking that its audience and destination still want it. */
  private async start(run: SyncRun): Promise<SyncRun> {
    const audience = await this.audiences.findById(run.audienceId);
    if (audience === null || audience.status !== 'active')
      throw new RunStopped('audience_not_active', 'The audience is not active any more: its syncs stopped.', 'cancelled');
    const linked = (await this.audiences.connectionIds([run.audienceId])).get(run.audienceId) ?? [];
    if (!linked.includes(run.connectionId))
      throw new RunStopped(
        'destination_removed',
        'The connection is no longer a destination of the audience: its syncs stopped.',
        'cancelled',
      );
    if (run.status === 'queued' || run.requestAttempt === 0) {
      run.attempts += 1;
      run.startedAt ??= new Date();
    }
    run.status = 'running';
    return this.runs.save(run);
  }

  /** The run's connection, if it can sync: active, granted the Data Manager scope (Google), with the Customer Match terms accepted. */
  private async usableConnection(run: SyncRun): Promise<Connection> {
    const connection = await this.connections.findById(run.connectionId);
    if (connection === null) throw new RunStopped('destination_removed', 'The connection was deleted.', 'cancelled');
    if (connection.status !== 'active')
      throw new RunStopped('reauthorize_required', `The connection is ${connection.status}: reconnect it to sync.`);
    if (lacksDataManagerScope(connection))
      throw new RunStopped('reauthorize_required', 'The Google connection was granted without the Data Manager scope: reconnect it.');
    if (connection.platform === 'google_ads' && !connection.customerMatchTermsAccepted)
      throw new RunStopped('terms_not_accepted', 'An admin must accept the Customer Match terms on the Google connection first.');
    return connection;
  }

  private async accessToken(connection: Connection): Promise<string> {
    try {
      return await this.grants.accessTokenFor(connection.id);
    } catch (error) {
      if (error instanceof PlatformError && error.grantLost)
        throw new RunStopped('reauthorize_required', 'The platform no longer honours the grant: reconnect it.');
      if (error instanceof PlatformError) throw new RunDeferred(Math.max(this.config.sync.retryBaseSeconds, 1));
      throw error;
    }
  }

  /** The destination's platform list, created on the first sync and kept (also on the run). */
  private async platformAudience(run: SyncRun, connection: Connection, accessToken: string): Promise<string> {
    const known = await this.destinations.platformAudienceId(run.audienceId, run.connectionId);
    if (known !== null) {
      if (run.platformAudienceId !== known) await this.runs.save(Object.assign(run, { platformAudienceId: known }));
      return known;
    }
    const audience = await this.audiences.getById(run.audienceId);
    const name = `${audience.name} (audience ${audience.id})`;
    const created =
      connection.platform === 'google_ads'
        ? await this.call(run, connection, () =>
            this.google.createUserList(
              accessToken,
              { operatingAccountId: connection.externalAccountId },
              { displayName: name, description: audience.description },
            ),
          )
        : await this.call(run, connection, () =>
            this.meta.createAudience(accessToken, connection.externalAccountId, { name, description: audience.description }),
          );
    if (!created.ok) throw this.stopFor(created.failure);
    const id = created.value.id;
    await this.destinations.update(run.audienceId, run.connectionId, { platformAudienceId: id, statusReason: null });
    await this.runs.save(Object.assign(run, { platformAudienceId: id }));
    return id;
  }

  /**
   * One platform request with the run's retries (SPEC 10.3, "Failures"): the shared rate budget
   * first; a retryable failure waits (Retry-After, else SYNC_RETRY_BASE_SECONDS doubling, with
   * jitter) and tries again, up to SYNC_MAX_ATTEMPTS; a lost grant turns the connection
   * `expired`/`revoked` and stops the run. A refusal comes back to the caller, which knows what
   * it means for its batch.
   */
  private async call<T>(
    run: SyncRun,
    connection: Connection,
    request: () => Promise<DestinationOutcome<T>>,
  ): Promise<DestinationOutcome<T>> {
    const platform = connection.platform === 'google_ads' ? 'google' : 'meta';
    for (;;) {
      await this.budget(run, connection, platform);
      const outcome = await request();
      if (outcome.ok) {
        if (run.requestAttempt !== 0) run.requestAttempt = 0;
        return outcome;
      }
      const failure = outcome.failure;
      if (failure.kind === 'grant_lost') {
        await this.grants.lostOnUse(connection.id, failure.grant === 'revoked', `platform_${failure.grant}`);
        throw new RunStopped('reauthorize_required', "The platform refused the connection's grant: reconnect it.");
      }
      if (failure.kind === 'scope_missing') throw new RunStopped('reauthorize_required', failure.detail);
      if (failure.kind === 'refused') return outcome;
      if (failure.reason === 'rate_limited') this.metrics.syncThrottled.inc({ platform });
      run.requestAttempt += 1;
      if (run.requestAttempt >= this.config.sync.maxAttempts) {
        run.requestAttempt = 0;
        throw new RunStopped(
          failure.reason === 'rate_limited' ? 'rate_limited' : 'platform_unavailable',
          `${failure.detail} (after ${this.config.sync.maxAttempts} tries)`,
        );
      }
      const seconds = retryDelaySeconds(failure, run.requestAttempt, this.config.sync.retryBaseSeconds);
      if (seconds > LONGEST_IN_JOB_WAIT_SECONDS) throw new RunDeferred(seconds);
      await this.runs.save(run);
      await sleep(seconds * 1000);
    }
  }

  /**
   * One request's token from the shared budget. A run books BUDGET_BOOKING tokens at a time and
   * spends them one per request, so the budget costs a statement per ten requests, not one each;
   * tokens a run books and does not spend are the budget's loss for at most a minute.
   */
  private async budget(run: SyncRun, connection: Connection, platform: 'google' | 'meta'): Promise<void> {
    const left = this.booked.get(run) ?? 0;
    if (left > 0) {
      this.booked.set(run, left - 1);
      return;
    }
    const count = Math.min(
      BUDGET_BOOKING,
      platform === 'google' ? this.config.sync.googleRequestsPerMinute : this.config.sync.metaRequestsPerMinute,
    );
    const wait = await this.budgets.take(connection, count);
    if (wait > LONGEST_IN_JOB_WAIT_SECONDS) throw new RunDeferred(wait);
    if (wait > 0) await sleep(wait * 1000);
    this.booked.set(run, count - 1);
  }

  /** The run stops on a refusal that concerns the whole destination. */
  stopFor(failure: DestinationFailure): RunStopped {
    if (failure.kind !== 'refused') return new RunStopped('platform_error', failure.detail);
    return new RunStopped(REFUSAL_CODES[failure.reason] ?? 'platform_error', failure.detail);
  }

  /** Adds a batch's outcome to the run's counters and saves them. */
  private async progress(
    run: SyncRun,
    change: { added?: number; removed?: number; failed?: Record<string, number>; unmatchable?: number; pending?: PendingGoogleRequest },
  ): Promise<void> {
    run.added += change.added ?? 0;
    run.skippedUnmatchable += change.unmatchable ?? 0;
    run.removed += change.removed ?? 0;
    for (const [reason, count] of Object.entries(change.failed ?? {})) {
      if (count === 0) continue;
      run.failed += count;
      run.failedByReason = { ...run.failedByReason, [reason]: (run.failedByReason[reason] ?? 0) + count };
    }
    if (change.pending) run.pendingRequests = [...run.pendingRequests, change.pending];
    await this.runs.save(run);
  }

  /** Ends the run, then records what the destination holds now. */
  private async finish(run: SyncRun, status: SyncStatus): Promise<void> {
    run.status = status;
    run.finishedAt = new Date();
    run.requestAttempt = 0;
    // Removals the run ends without a verdict on (none came, or the run stopped) are the next
    // sync's to send again: their people stay as sent. Removing someone twice is harmless.
    for (const pending of run.pendingRequests)
      if (pending.operation === 'remove') await this.members.settleRemoval(run, pending.requestId, false);
    // What the destination holds now, counted once for the match rate and the destination.
    const membersSent = run.dryRun ? 0 : await this.members.sentCount(run);
    if (!run.dryRun && (status === 'succeeded' || status === 'partially_failed')) run.matchRate = await this.matchRate(run, membersSent);
    await this.transactions.run(async (transaction) => {
      await this.runs.save(run, transaction);
      // Integrators hear of a real run's end (SPEC 10.5) with the run as the API shows it: a run
      // with failures is `sync.failed`, whether some members went (partially_failed) or none.
      if (!run.dryRun && status !== 'cancelled')
        await this.webhooks.emit(transaction, status === 'succeeded' ? 'sync.succeeded' : 'sync.failed', toSyncRunDto(run));
    });
    this.metrics.syncRuns.inc({ platform: run.platform, status });
    if (run.dryRun) return;
    await this.destinationAfter(run, membersSent, {
      lastSyncedAt: status === 'succeeded' || status === 'partially_failed' ? run.finishedAt : undefined,
      matchRate: run.matchRate ?? undefined,
      statusReason: run.errorCode === 'audience_flagged' ? 'audience_flagged' : status === 'succeeded' ? null : undefined,
    });
  }

  private async destinationAfter(run: SyncRun, membersSent: number, update: DestinationUpdate): Promise<void> {
    await this.destinations.update(run.audienceId, run.connectionId, {
      ...update,
      lastRunId: run.id,
      lastRunStatus: run.status,
      membersSent,
    });
  }

  /**
   * The match rate as the platform reports it after a run: Google's `matchRatePercentage` on the
   * list; for Meta, the middle of the audience's approximate size range over the members sent
   * (Meta gives no rate). Null when the platform says nothing or the read fails: it is an extra.
   */
  private async matchRate(run: SyncRun, sent: number): Promise<number | null> {
    if (run.platformAudienceId === null) return null;
    try {
      const connection = await this.connections.getById(run.connectionId);
      const token = await this.grants.accessTokenFor(connection.id);
      if (connection.platform === 'google_ads') {
        const list = await this.google.getUserList(token, { operatingAccountId: connection.externalAccountId }, run.platformAudienceId);
        return list.ok && list.value.matchRatePercentage !== null ? clampRate(list.value.matchRatePercentage / 100) : null;
      }
      const audience = await this.meta.getAudience(token, run.platformAudienceId);
      if (!audience.ok) return null;
      if (audience.value.flagged) await this.destinations.update(run.audienceId, run.connectionId, { statusReason: 'audience_flagged' });
      const { approximateCountLowerBound: lower, approximateCountUpperBound: upper } = audience.value;
      if (lower === null || upper === null || sent === 0) return null;
      return clampRate((lower + upper) / 2 / sent);
    } catch (error) {
      this.logger.warn({ err: error, run_id: run.id }, 'sync match rate not read');
      return null;
    }
  }

  private async scheduleGooglePoll(run: SyncRun, seconds: number): Promise<void> {
    await this.transactions.run((transaction) =>
      this.jobs.enqueue(
        transaction,
        JOBS.syncGoogleStatus,
        { customerId: run.customerId, runId: run.id },
        {
          key: `${run.customerId}:${run.id}`,
          runAt: new Date(Date.now() + seconds * 1000),
        },
      ),
    );
  }

  /**
   * Google's verdicts (SPEC 10.3): each pending request is asked for; a failed one counts its
   * members failed and forgets them as sent (the next sync sends them again), or for a removal
   * keeps them as sent (the next sync removes them again); a done removal forgets them; partial success
   * counts the failures Google gives by reason. While any is processing, ask again later.
   */
  async pollGoogle(runId: number): Promise<void> {
    const run = await this.runs.findById(runId);
    if (run === null || run.status !== 'awaiting_platform') return;
    let token: string;
    try {
      token = await this.grants.accessTokenFor(run.connectionId);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      run.errorCode = 'reauthorize_required';
      run.errorDetail = "Google's verdict could not be read: the connection needs reconnecting.";
      await this.finish(run, run.failed > 0 ? 'partially_failed' : 'succeeded');
      return;
    }
    const stillPending: PendingGoogleRequest[] = [];
    for (const pending of run.pendingRequests) {
      const verdict = await this.google.retrieveRequestStatus(token, pending.requestId);
      if (!verdict.ok) {
        if (verdict.failure.kind === 'refused' && verdict.failure.reason !== 'unknown_request') {
          run.errorDetail = verdict.failure.detail;
          continue;
        }
        stillPending.push(pending);
        continue;
      }
      const { state, errorCounts } = verdict.value;
      if (state === 'processing' || state === 'unknown') {
        stillPending.push(pending);
        continue;
      }
      if (pending.operation === 'remove') await this.members.settleRemoval(run, pending.requestId, state !== 'failed');
      if (state === 'failed') {
        if (pending.operation === 'ingest') await this.members.forgetRequest(run, pending.requestId);
        const counted = Object.values(errorCounts).reduce((sum, count) => sum + count, 0);
        const reasons = counted > 0 ? errorCounts : { request_failed: pending.members };
        await this.progress(run, {
          added: pending.operation === 'ingest' ? -pending.members : 0,
          removed: pending.operation === 'remove' ? -pending.members : 0,
          failed: reasons,
        });
      } else if (state === 'partial_success') {
        await this.progress(run, { failed: errorCounts });
      }
    }
    run.pendingRequests = stillPending;
    run.pollAttempts += 1;
    if (stillPending.length > 0 && run.pollAttempts < MAX_STATUS_POLLS) {
      await this.runs.save(run);
      await this.scheduleGooglePoll(run, this.config.sync.googleStatusPollBackoffSeconds * 2 ** (run.pollAttempts - 1));
      return;
    }
    if (stillPending.length > 0) {
      run.errorCode = 'verdict_unavailable';
      run.errorDetail = `Google gave no verdict on ${stillPending.length} request(s) after ${run.pollAttempts} polls.`;
    }
    await this.finish(run, outcomeOf(run));
  }
}

/** The job key of a destination: its runs are one at a time. */
export function destinationKey(run: { customerId: number; audienceId: number; connectionId: number }): string {
  return `${run.customerId}:${run.audienceId}:${run.connectionId}`;
}

/** How a run that sent what it could ends: no failure, some members through, or none. */
function outcomeOf(run: Pick<SyncRun, 'added' | 'removed' | 'failed'>): SyncStatus {
  if (run.failed === 0) return 'succeeded';
  return run.added + run.removed > 0 ? 'partially_failed' : 'failed';
}

function clampRate(rate: number): number {
  return Math.min(1, Math.max(0, Math.round(rate * 10_000) / 10_000));
}
