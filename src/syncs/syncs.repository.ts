import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import type { ListSyncsQuery } from './dto/list-syncs.query.js';
import { SyncRun, type SyncTrigger } from './sync-run.entity.js';

const ORDERING_COLUMNS: OrderingColumns<SyncRun> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
  status: DEFAULT_ORDERING_COLUMNS.status,
};

/** A destination as a new run needs it. */
export interface RunDestination {
  audienceId: number;
  connectionId: number;
  platform: string;
}

/** All SQL about sync runs (SPEC 10.3). */
@Injectable()
export class SyncsRepository extends TenantRepository<SyncRun> {
  constructor(@InjectRepository(SyncRun) runs: Repository<SyncRun>, tenants: TenantContext) {
    super(runs, tenants, 'run');
  }

  list(filters: ListSyncsQuery, request: PageRequest): Promise<ListResult<SyncRun>> {
    const conditions: ListCondition<SyncRun>[] = [];
    if (filters.audience !== undefined) conditions.push({ property: 'audienceId', operator: '=', value: filters.audience });
    if (filters.connection !== undefined) conditions.push({ property: 'connectionId', operator: '=', value: filters.connection });
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    return this.listPage(conditions, request, { columns: ORDERING_COLUMNS });
  }

  /**
   * A queued real run for the destination, or the one already queued or running (SPEC 10.3: a
   * second POST gets the first run). The partial unique index decides between concurrent callers:
   * the loser's insert does nothing and it reads the winner's row, which its statement sees once
   * the winner commits. `created` says whether this call made it. A dry run is always new.
   */
  async openRun(
    destination: RunDestination & { platformAudienceId: string | null },
    trigger: SyncTrigger,
    dryRun: boolean,
    transaction: Transaction,
  ): Promise<{ runId: number; created: boolean }> {
    const values = [destination.audienceId, destination.connectionId, destination.platform, destination.platformAudienceId, trigger];
    if (dryRun) {
      const { rows } = await this.tenantQuery<{ id: number }>(
        `INSERT INTO sync_runs (customer_id, audience_id, connection_id, platform, platform_audience_id, trigger, dry_run)
         VALUES ($1, $2, $3, $4, $5, $6, true) RETURNING id`,
        values,
        transaction,
      );
      return { runId: Number(rows[0]!.id), created: true };
    }
    const { rows } = await this.tenantQuery<{ id: number }>(
      `INSERT INTO sync_runs (customer_id, audience_id, connection_id, platform, platform_audience_id, trigger, dry_run)
       VALUES ($1, $2, $3, $4, $5, $6, false)
       ON CONFLICT (customer_id, audience_id, connection_id) WHERE status IN ('queued', 'running') AND NOT dry_run DO NOTHING
       RETURNING id`,
      values,
      transaction,
    );
    if (rows[0] !== undefined) return { runId: Number(rows[0].id), created: true };
    const { rows: open } = await this.tenantQuery<{ id: number }>(
      `SELECT id FROM sync_runs WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3
          AND status IN ('queued', 'running') AND NOT dry_run`,
      [destination.audienceId, destination.connectionId],
      transaction,
    );
    // The open run finished between the two statements: this caller's one is the next.
    if (open[0] === undefined) return this.openRun(destination, trigger, dryRun, transaction);
    return { runId: Number(open[0].id), created: false };
  }

  /** The runs of `ids`, in the order of `ids`, in one statement. */
  async findByIds(ids: number[], transaction?: Transaction): Promise<SyncRun[]> {
    if (ids.length === 0) return [];
    const found = await this.query(transaction).andWhere('run.id IN (:...ids)', { ids }).getMany();
    const byId = new Map(found.map((run) => [Number(run.id), run]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** A queued run turned `cancelled`; undefined when it was not queued (any more). */
  async cancelQueued(runId: number, transaction: Transaction): Promise<boolean> {
    const { affected } = await this.tenantQuery(
      `UPDATE sync_runs SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE customer_id = $1 AND id = $2 AND status = 'queued'`,
      [runId],
      transaction,
    );
    return affected === 1;
  }

  /**
   * Destinations of active audiences with no real run queued, running or finished within
   * `hours`: the scheduled syncs (SPEC 10.3, SYNC_INTERVAL_HOURS). Workspace-wide, for one tenant.
   */
  async dueDestinations(hours: number, transaction: Transaction): Promise<RunDestination[]> {
    const { rows } = await this.tenantQuery<RunDestination>(
      `SELECT l.audience_id AS "audienceId", l.connection_id AS "connectionId", c.platform
         FROM audience_connections l
         JOIN audiences a ON a.customer_id = l.customer_id AND a.id = l.audience_id AND a.status = 'active'
         JOIN connections c ON c.customer_id = l.customer_id AND c.id = l.connection_id
        WHERE l.customer_id = $1 AND NOT EXISTS (
          SELECT 1 FROM sync_runs r WHERE r.customer_id = $1 AND r.audience_id = l.audience_id AND r.connection_id = l.connection_id
             AND NOT r.dry_run AND (r.status IN ('queued', 'running') OR r.queued_at > now() - make_interval(hours => $2)))
        ORDER BY l.audience_id, l.connection_id`,
      [hours],
      transaction,
    );
    return rows.map((row) => ({ ...row, audienceId: Number(row.audienceId), connectionId: Number(row.connectionId) }));
  }

  /** The destinations of one audience, with each connection's platform. */
  async destinationsOf(audienceId: number, transaction?: Transaction): Promise<RunDestination[]> {
    const { rows } = await this.tenantQuery<RunDestination>(
      `SELECT l.audience_id AS "audienceId", l.connection_id AS "connectionId", c.platform
         FROM audience_connections l JOIN connections c ON c.customer_id = l.customer_id AND c.id = l.connection_id
        WHERE l.customer_id = $1 AND l.audience_id = $2 ORDER BY l.connection_id`,
      [audienceId],
      transaction,
    );
    return rows.map((row) => ({ ...row, audienceId: Number(row.audienceId), connectionId: Number(row.connectionId) }));
  }
}
