import { Injectable } from '@nestjs/common';
import { AudienceDestinationsRepository } from '../audiences/audience-destinations.repository.js';
import { AudiencesRepository } from '../audiences/audiences.repository.js';
import { ApiError } from '../common/errors/api-error.js';
import { type Page, pageOf } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type Transaction, Transactions } from '../common/tenancy/transactions.js';
import { MESSAGES } from '../common/validation/fields.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { JOBS } from '../jobs/job-definitions.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { Jobs } from '../jobs/jobs.service.js';
import { Inject } from '@nestjs/common';
import type { CreateSyncDto, SyncRunDto, SyncRunsDto } from './dto/sync-run.dto.js';
import type { ListSyncsQuery } from './dto/list-syncs.query.js';
import type { SyncTrigger } from './sync-run.entity.js';
import { SyncMaintenanceRepository } from './sync-maintenance.repository.js';
import { SyncMembersRepository } from './sync-members.repository.js';
import { toSyncRunDto } from './sync-run.mapper.js';
import { destinationKey } from './sync-runner.service.js';
import { syncTenant } from './sync-tenant.js';
import { type RunDestination, SyncsRepository } from './syncs.repository.js';

/**
 * The sync runs resource (SPEC 10.3) and what starts runs: a POST, a membership change, the
 * schedule. Every new run is enqueued in the transaction that creates it.
 */
@Injectable()
export class SyncsService {
  constructor(
    private readonly runs: SyncsRepository,
    private readonly audiences: AudiencesRepository,
    private readonly destinations: AudienceDestinationsRepository,
    private readonly connections: ConnectionsRepository,
    private readonly maintenance: SyncMaintenanceRepository,
    private readonly members: SyncMembersRepository,
    private readonly transactions: Transactions,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(query: ListSyncsQuery, url: URL): Promise<Page<SyncRunDto>> {
    return pageOf(await this.runs.list(query, query.page), query.page, url, toSyncRunDto);
  }

  async get(id: number): Promise<SyncRunDto> {
    return toSyncRunDto(await this.runs.getById(id));
  }

  /**
   * `POST /api/v1/syncs/`: a run per destination (or for the one named), coalesced with a real
   * run already queued or running for it. The audience must be active (400 under `audience`), the
   * connection one of its destinations (400 under `connection`).
   */
  async start(body: CreateSyncDto): Promise<SyncRunsDto> {
    const ids = await this.transactions.run(async (transaction) => {
      const audience = await this.audiences.findById(body.audience, { transaction });
      if (audience === null) throw ApiError.field('audience', MESSAGES.doesNotExist(body.audience));
      if (audience.status !== 'active')
        throw ApiError.field('audience', `The audience is ${audience.status}; only an active audience syncs.`);
      let destinations = await this.runs.destinationsOf(audience.id, transaction);
      if (body.connection !== undefined && body.connection !== null) {
        if ((await this.connections.existingIds([body.connection], transaction)).size === 0)
          throw ApiError.field('connection', MESSAGES.doesNotExist(body.connection));
        destinations = destinations.filter((destination) => destination.connectionId === body.connection);
        if (destinations.length === 0) throw ApiError.field('connection', 'This connection is not a destination of the audience.');
      }
      if (destinations.length === 0) throw ApiError.field('audience', 'The audience has no destination: add a connection to it first.');
      return this.open(destinations, 'manual', body.dry_run ?? false, transaction);
    });
    return { runs: (await this.runs.findByIds(ids)).map(toSyncRunDto) };
  }

  /** `POST /api/v1/syncs/{id}/cancel/`: a queued run is cancelled (200); any other is a 409. */
  async cancel(id: number): Promise<SyncRunDto> {
    await this.transactions.run(async (transaction) => {
      const run = await this.runs.getById(id, { transaction, lock: true });
      if (!(await this.runs.cancelQueued(run.id, transaction)))
        throw ApiError.conflict(`Only a queued run can be cancelled; this one is ${run.status}.`);
    });
    return this.get(id);
  }

  /** Opens (or finds) a run per destination and enqueues each new one, in the caller's transaction. */
  private async open(destinations: RunDestination[], trigger: SyncTrigger, dryRun: boolean, transaction: Transaction): Promise<number[]> {
    const customerId = this.tenants.current().customerId;
    const ids: number[] = [];
    for (const destination of destinations) {
      const platformAudienceId = await this.destinations.platformAudienceId(destination.audienceId, destination.connectionId, transaction);
      const { runId, created } = await this.runs.openRun({ ...destination, platformAudienceId }, trigger, dryRun, transaction);
      if (created) {
        await this.jobs.enqueue(
          transaction,
          JOBS.syncRun,
          { customerId, runId },
          { key: destinationKey({ customerId, ...destination }), runAt: new Date() },
        );
      }
      ids.push(runId);
    }
    return ids;
  }

  /**
   * An audience's members or their people changed (debounced): each destination of an active
   * audience whose diff is not empty gets a run. An empty diff makes no run, so a recompute that
   * changed nothing leaves no trace in the runs.
   */
  @JobHandler(JOBS.syncMembershipChanged)
  async membershipChangedJob(payload: { customerId: number; audienceId: number }): Promise<void> {
    await this.tenants.run(syncTenant(payload.customerId), async () => {
      const audience = await this.audiences.findById(payload.audienceId);
      if (audience === null || audience.status !== 'active') return;
      const due: RunDestination[] = [];
      for (const destination of await this.runs.destinationsOf(audience.id)) {
        const scope = { ...destination, platform: destination.platform === 'google_ads' ? ('google' as const) : ('meta' as const) };
        const plan = await this.members.plan(scope);
        if (plan.plannedAdd + plan.plannedRemove > 0) due.push(destination);
      }
      if (due.length > 0) await this.transactions.run((transaction) => this.open(due, 'membership_change', false, transaction));
    });
  }

  /** Hourly: every destination of an active audience not synced for SYNC_INTERVAL_HOURS gets a run. */
  @JobHandler(JOBS.syncSchedule)
  async scheduleJob(): Promise<void> {
    const workspaces = await this.transactions.run((transaction) => this.maintenance.workspacesWithDestinations(transaction));
    for (const customerId of workspaces) {
      await this.tenants.run(syncTenant(customerId), () =>
        this.transactions.run(async (transaction) => {
          const due = await this.runs.dueDestinations(this.config.sync.intervalHours, transaction);
          await this.open(due, 'schedule', false, transaction);
        }),
      );
    }
  }
}
