import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { TenantContext } from '../../common/tenancy/tenant-context.js';
import { Clock } from '../../common/time/clock.js';
import { Transactions } from '../../common/tenancy/transactions.js';
import { JOBS } from '../../jobs/job-definitions.js';
import { JobHandler } from '../../jobs/job-handler.decorator.js';
import { LOGGER } from '../../logging/logger.token.js';
import { ConnectionGrants, type RefreshOutcome } from './connection-grants.js';
import { ConnectionMaintenanceRepository } from './connection-maintenance.repository.js';
import { tenantOfStoredRow } from './stored-tenant.js';

/** Meta long-lived tokens are renewed when they have less than this left (they last about 60 days). */
export const META_RENEW_BEFORE_MS = 7 * 24 * 3600 * 1000;
/** A Google grant not refreshed for this long is refreshed by the sweep, which finds grants revoked at Google. */
export const GOOGLE_CHECK_EVERY_MS = 24 * 3600 * 1000;
/** Connections handled per sweep at most; the rest wait for the next one. */
const PER_SWEEP = 100;

export type SweepCounts = Record<RefreshOutcome, number>;

/**
 * The periodic token sweep (SPEC section 6): renews Meta long-lived tokens before they run out and
 * refreshes Google grants once a day, so a grant revoked at the provider turns its connection
 * `expired` or `revoked` (signals paused) without waiting for a use. Each connection is claimed
 * with `FOR UPDATE SKIP LOCKED` in a transaction of its own, so several instances sweep side by
 * side without doing the same row twice, and the work runs in that connection's workspace.
 */
@Injectable()
export class ConnectionSweep {
  private running: Promise<SweepCounts> | undefined;

  constructor(
    private readonly maintenance: ConnectionMaintenanceRepository,
    private readonly grants: ConnectionGrants,
    private readonly transactions: Transactions,
    private readonly tenants: TenantContext,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The scheduled sweep. Safe to run twice, even at once in two processes: each connection is
   * claimed under FOR UPDATE SKIP LOCKED and only a grant that is still due is refreshed, so a
   * second run finds nothing left to do.
   */
  @JobHandler(JOBS.connectionSweep)
  async sweepJob(): Promise<void> {
    await this.sweep();
  }

  /** One sweep; a sweep already under way in this process is joined, not doubled. */
  sweep(): Promise<SweepCounts> {
    this.running ??= this.sweepOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sweepOnce(): Promise<SweepCounts> {
    const counts: SweepCounts = { refreshed: 0, lost: 0, failed: 0 };
    const tried: string[] = [];
    for (let handled = 0; handled < PER_SWEEP; handled++) {
      const now = this.clock.nowMs();
      let claimed: string | undefined;
      let outcome: RefreshOutcome | undefined;
      try {
        outcome = await this.transactions.run(async (transaction) => {
          const due = await this.maintenance.claimDue(
            transaction,
            new Date(now + META_RENEW_BEFORE_MS),
            new Date(now - GOOGLE_CHECK_EVERY_MS),
            tried,
          );
          if (!due) return undefined;
          claimed = `${due.customerId}:${due.id}`;
          tried.push(claimed);
          return this.tenants.run(tenantOfStoredRow(due), () => this.grants.refreshInTransaction(due.id, transaction));
        });
      } catch (error) {
        // One bad row (a token under a retired key, a failed statement) must not stop the others;
        // a failure before any row was claimed (the database is down) ends this sweep.
        if (claimed === undefined) throw error;
        this.logger.warn({ connection: claimed, err: error }, 'connection sweep skipped a connection');
        outcome = 'failed';
      }
      if (outcome === undefined) break;
      counts[outcome]++;
    }
    if (counts.refreshed + counts.lost + counts.failed > 0) this.logger.info(counts, 'connection sweep done');
    return counts;
  }
}
