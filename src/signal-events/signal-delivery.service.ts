import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import type { Connection, Platform } from '../connections/connection.entity.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { ConnectionGrants } from '../connections/oauth/connection-grants.js';
import { PlatformError } from '../connections/oauth/platforms/ad-platform-client.js';
import type { DestinationFailure, DestinationOutcome } from '../destinations/destination-types.js';
import { GOOGLE_MAX_EVENTS_PER_REQUEST, GoogleEventsClient, validateGoogleEvent } from '../destinations/google-events.client.js';
import { META_MAX_EVENTS_PER_REQUEST, MetaConversionsClient, validateMetaEvent } from '../destinations/meta-conversions.client.js';
import { retryDelaySeconds } from '../destinations/retry-schedule.js';
import { JOBS, signalDeliveryKey } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';
import { Metrics } from '../metrics/metrics.js';
import { googleSignalConfig, metaSignalConfig } from '../signals/signal-config.js';
import { SignalStatus } from '../signals/signal.entity.js';
import { SignalsRepository } from '../signals/signals.repository.js';
import { PlatformRateBudget } from '../syncs/platform-rate-budget.js';
import { SignalsService } from '../signals/signals.service.js';
import { googleEventOf, metaEventOf } from './event-payloads.js';
import { SignalEventsMaintenanceRepository } from './signal-events-maintenance.repository.js';
import { signalEventsTenant } from './signal-events-tenant.js';
import { type PendingSignalEvent, SignalEventsRepository } from './signal-events.repository.js';

/** Requests one delivery run sends before it hands over to a continuation (so one busy signal cannot hold a worker for long). */
const MAX_REQUESTS_PER_RUN = 20;
/** SPEC 10.4: a paused or failed signal holds its events at most this long. */
const HELD_DAYS = 7;
/** SPEC 10.4: events are deduplicated for 30 days, and kept as long. */
const KEPT_DAYS = 30;

/** What one run works with. */
interface Run {
  sender: Sender;
  signalId: number;
  connection: Connection;
  accessToken: string;
}

/** How a request went, for the run: go on with the next batch, or stop (a retry is scheduled, or the destination is gone). */
type Step = 'continue' | 'stop';

/** One platform's way to send a batch, behind one shape: the run does not care which platform it is. */
interface Sender {
  platform: Platform;
  batchSize: number;
  /** Why the platform would refuse this event, checked before anything is sent. */
  problem(event: PendingSignalEvent, now: number): string | undefined;
  send(accessToken: string, events: PendingSignalEvent[]): Promise<DestinationOutcome<unknown>>;
}

/**
 * Delivers signal events to Google (Data Manager `events:ingest`) and Meta (Conversions API) —
 * SPEC 10.4 — one run per signal at a time (the job's per-key queue), batch after batch.
 *
 * Safe to repeat: an event is marked delivered only after the platform accepted its request, and a
 * run that dies between the two resends it with the same `event_id` (Meta deduplicates by
 * `event_id` and `event_name` within 48 hours) and `transactionId` (Google's dedup key for a
 * conversion), so a second send changes nothing there. Retries follow SPEC 10.3: a retryable
 * answer counts a try on the batch's events, records `retry_at` and enqueues a continuation for
 * then (graphile-worker's own backoff is fixed); a job that runs earlier (a new batch of events
 * replaced the waiting one) sees `retry_at` and waits for it.
 */
/** A budget wait longer than this is not slept in the job: the delivery goes on in a later one. */
const LONGEST_IN_JOB_WAIT_SECONDS = 60;

@Injectable()
export class SignalDeliveryService {
  private readonly google: GoogleEventsClient;
  private readonly meta: MetaConversionsClient;

  constructor(
    private readonly events: SignalEventsRepository,
    private readonly maintenance: SignalEventsMaintenanceRepository,
    private readonly signals: SignalsRepository,
    private readonly signalsService: SignalsService,
    private readonly connections: ConnectionsRepository,
    private readonly grants: ConnectionGrants,
    private readonly transactions: Transactions,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly metrics: Metrics,
    private readonly budgets: PlatformRateBudget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.google = GoogleEventsClient.fromConfig(config);
    this.meta = MetaConversionsClient.fromConfig(config);
  }

  @JobHandler(JOBS.signalDelivery)
  async deliverJob(payload: { customerId: number; signalId: number }): Promise<void> {
    await this.tenants.run(signalEventsTenant(payload.customerId), () => this.deliver(payload.signalId));
  }

  @JobHandler(JOBS.signalEventsMaintenance)
  async maintenanceJob(): Promise<void> {
    const held = await this.maintenance.holdPendingOfInactiveSignals();
    const expired = await this.maintenance.expireHeld(HELD_DAYS);
    const deleted = await this.maintenance.deleteOlderThan(KEPT_DAYS);
    if (held + expired + deleted > 0) this.logger.info({ held, expired, deleted }, 'signal events held, expired and deleted');
  }

  /** Sends what the signal has pending, as the signal and its connection allow. */
  async deliver(signalId: number): Promise<void> {
    const signal = await this.signals.findById(signalId);
    if (signal === null) return;
    if (signal.status !== SignalStatus.active) {
      await this.events.hold(signalId);
      return;
    }
    const retryAt = await this.events.retryAt(signalId);
    if (retryAt !== null && new Date(retryAt).getTime() > Date.now()) {
      await this.continueAt(signalId, new Date(retryAt));
      return;
    }
    await this.events.release(signalId);
    const connection = signal.connectionId === null ? null : await this.connections.findById(signal.connectionId);
    if (connection === null || connection.status !== 'active') {
      // Its connection's grant is gone: the connection's suspension pauses the signal; hold until then.
      await this.events.hold(signalId);
      return;
    }
    const sender = this.senderFor(connection, signal.config);
    if (sender === undefined) {
      await this.failSignal(signalId, 'config_incomplete: the signal’s config is not complete for its connection’s platform.');
      return;
    }
    let accessToken: string;
    try {
      accessToken = await this.grants.accessTokenFor(connection.id);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      // A lost grant has turned the connection expired or revoked and paused the signal; anything else is retried later.
      await this.events.recordError(signalId, `reauthorize_required: ${error.message}`, error.grantLost ? null : this.later(1));
      if (error.grantLost) await this.events.hold(signalId);
      else await this.continueAt(signalId, this.later(1));
      return;
    }
    for (let request = 0; request < MAX_REQUESTS_PER_RUN; request++) {
      const batch = await this.events.pendingBatch(signalId, sender.batchSize);
      if (batch.length === 0) return;
      const now = Date.now();
      const valid: PendingSignalEvent[] = [];
      const invalid = new Map<string, string[]>();
      for (const event of batch) {
        const problem = sender.problem(event, now);
        if (problem === undefined) valid.push(event);
        else invalid.set(problem, [...(invalid.get(problem) ?? []), event.id]);
      }
      for (const [problem, ids] of invalid) await this.fail(sender, signalId, ids, `${problem}: refused before sending`);
      if (valid.length > 0 && (await this.send({ sender, signalId, connection, accessToken }, valid)) === 'stop') return;
    }
    await this.continueAt(signalId, new Date());
  }

  /**
   * One request and what its answer means. A request refused as invalid is split in halves until
   * the bad event is alone (Meta refuses a whole batch for one event; Google a whole request):
   * that one fails with the platform's reason and the others are delivered.
   */
  private async send(run: Run, events: PendingSignalEvent[]): Promise<Step> {
    const { sender, signalId } = run;
    const ids = events.map((event) => event.id);
    // The platform's request budget, shared with the syncs of the same account across workers (SPEC 10.3).
    const wait = await this.budgets.take(run.connection);
    if (wait > LONGEST_IN_JOB_WAIT_SECONDS) {
      await this.continueAt(signalId, this.later(wait));
      return 'stop';
    }
    if (wait > 0) await sleep(wait * 1000);
    const outcome = await sender.send(run.accessToken, events);
    if (outcome.ok) {
      await this.events.markDelivered(signalId, ids);
      this.metrics.signalEventsSent.inc({ platform: sender.platform }, events.length);
      return 'continue';
    }
    const failure = outcome.failure;
    const words = describe(failure);
    if (failure.kind === 'retryable') {
      if (failure.reason === 'rate_limited') this.metrics.signalEventsThrottled.inc({ platform: sender.platform });
      const attempt = Math.max(...events.map((event) => event.attempts)) + 1;
      if (attempt >= this.config.sync.maxAttempts) {
        await this.fail(sender, signalId, ids, `${words} (after ${attempt} tries)`);
        await this.events.recordError(signalId, words, null);
        return 'continue';
      }
      await this.events.countAttempt(signalId, ids, words);
      const at = this.later(retryDelaySeconds(failure, attempt, this.config.sync.retryBaseSeconds));
      await this.events.recordError(signalId, words, at);
      await this.continueAt(signalId, at);
      return 'stop';
    }
    if (failure.kind === 'grant_lost') {
      // The token was refused: a refresh tells a token merely expired from a grant that is gone
      // (which turns the connection expired or revoked and pauses the signal, SPEC section 6).
      // The error is written in the refresh's transaction, so a signal its suspension pauses says why at once.
      const error = `reauthorize_required: ${failure.detail}`;
      const refreshed = await this.transactions
        .run(async (transaction) => {
          await this.events.recordError(signalId, error, null, transaction);
          return this.grants.refreshInTransaction(run.connection.id, transaction);
        })
        .catch(async () => {
          await this.events.recordError(signalId, error, null);
          return 'failed' as const;
        });
      if (refreshed === 'lost') await this.events.hold(signalId);
      else await this.continueAt(signalId, this.later(this.config.sync.retryBaseSeconds));
      return 'stop';
    }
    if (failure.kind === 'scope_missing') {
      await this.failSignal(
        signalId,
        `reauthorize_required: ${failure.detail} Reconnect the Google Ads account to grant the Data Manager scope.`,
      );
      return 'stop';
    }
    if (failure.reason === 'not_found' || failure.reason === 'permission_denied' || failure.reason === 'terms_not_accepted') {
      await this.failSignal(signalId, `destination_refused: ${failure.detail}`);
      return 'stop';
    }
    if ((failure.reason === 'invalid_request' || failure.reason === 'too_large') && events.length > 1) {
      const half = Math.ceil(events.length / 2);
      if ((await this.send(run, events.slice(0, half))) === 'stop') return 'stop';
      return this.send(run, events.slice(half));
    }
    await this.fail(sender, signalId, ids, words);
    await this.events.recordError(signalId, words, null);
    return 'continue';
  }

  private senderFor(connection: Connection, config: Record<string, unknown>): Sender | undefined {
    if (connection.platform === 'google_ads') {
      const google = googleSignalConfig(config);
      if (google === undefined) return undefined;
      const target = { operatingAccountId: connection.externalAccountId, conversionActionId: google.conversionActionId };
      return {
        platform: 'google_ads',
        batchSize: GOOGLE_MAX_EVENTS_PER_REQUEST,
        problem: (event, now) => validateGoogleEvent(googleEventOf(event), now),
        send: (token, events) => this.google.ingestEvents(token, target, events.map(googleEventOf)),
      };
    }
    const meta = metaSignalConfig(config);
    if (meta === undefined) return undefined;
    return {
      platform: 'meta_ads',
      batchSize: META_MAX_EVENTS_PER_REQUEST,
      problem: (event, now) => validateMetaEvent(metaEventOf(event, meta), now),
      send: (token, events) =>
        this.meta.sendEvents(
          token,
          { pixelId: meta.pixelId, testEventCode: meta.testEventCode },
          events.map((event) => metaEventOf(event, meta)),
        ),
    };
  }

  private async fail(sender: Sender, signalId: number, ids: string[], reason: string): Promise<void> {
    await this.events.markFailed(signalId, ids, reason);
    this.metrics.signalEventsFailed.inc({ platform: sender.platform }, ids.length);
  }

  /** The destination itself is refused: the signal turns failed with the reason, and its events wait for a reactivation. */
  private async failSignal(signalId: number, reason: string): Promise<void> {
    await this.transactions.run((transaction) => this.signalsService.failForDestination(signalId, reason, transaction));
    await this.events.recordError(signalId, reason, null);
    await this.events.hold(signalId);
    this.logger.warn({ signal: signalId, reason: reason.split(':')[0] }, 'signal failed: its destination was refused');
  }

  private async continueAt(signalId: number, runAt: Date): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.transactions.run((transaction) =>
      this.jobs.enqueue(
        transaction,
        JOBS.signalDelivery,
        { customerId, signalId },
        { key: signalDeliveryKey(customerId, signalId), runAt },
      ),
    );
  }

  private later(seconds: number): Date {
    return new Date(Date.now() + seconds * 1000);
  }
}

/** A failure in words for `error` and `last_error`: a reason code, then the platform's message (already made safe). */
function describe(failure: DestinationFailure): string {
  const code = failure.kind === 'retryable' || failure.kind === 'refused' ? failure.reason : failure.kind;
  return `${code}: ${failure.detail}`;
}
