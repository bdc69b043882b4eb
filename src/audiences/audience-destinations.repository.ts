import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import { Audience } from './audience.entity.js';

/** One destination of an audience as the audience shows it (SPEC 10.3), with its connection's platform. */
export interface DestinationRow {
  connectionId: number;
  platform: string;
  /** The connection's own state, for the destination's `status_reason` when nothing of its own is wrong. */
  connectionStatus: string;
  connectionStatusReason: string | null;
  connectionScopes: string[];
  customerMatchTermsAccepted: boolean;
  platformAudienceId: string | null;
  statusReason: string | null;
  lastRunId: number | null;
  lastRunStatus: string | null;
  lastSyncedAt: Date | null;
  membersSent: number;
  matchRate: number | null;
}

/** What a sync writes about a destination; unnamed fields stay. */
export type DestinationUpdate = Partial<
  Omit<
    DestinationRow,
    'connectionId' | 'platform' | 'connectionStatus' | 'connectionStatusReason' | 'connectionScopes' | 'customerMatchTermsAccepted'
  >
>;

const COLUMNS: Record<keyof DestinationUpdate, string> = {
  platformAudienceId: 'platform_audience_id',
  statusReason: 'status_reason',
  lastRunId: 'last_run_id',
  lastRunStatus: 'last_run_status',
  lastSyncedAt: 'last_synced_at',
  membersSent: 'members_sent',
  matchRate: 'match_rate',
};

/** All SQL about `audience_destinations`: read with the audience, written by its syncs. */
@Injectable()
export class AudienceDestinationsRepository extends TenantRepository<Audience> {
  constructor(@InjectRepository(Audience) audiences: Repository<Audience>, tenants: TenantContext) {
    super(audiences, tenants, 'audience');
  }

  /** The audience's destinations (its linked connections), each with what its syncs left, in connection order. */
  async forAudience(audienceId: number, transaction?: Transaction): Promise<DestinationRow[]> {
    const { rows } = await this.tenantQuery<DestinationRow>(
      `SELECT l.connection_id AS "connectionId", c.platform, c.status AS "connectionStatus", c.status_reason AS "connectionStatusReason",
              c.scopes AS "connectionScopes", c.customer_match_terms_accepted AS "customerMatchTermsAccepted", d.platform_audience_id AS "platformAudienceId", d.status_reason AS "statusReason",
              d.last_run_id AS "lastRunId", d.last_run_status AS "lastRunStatus", d.last_synced_at AS "lastSyncedAt",
              coalesce(d.members_sent, 0) AS "membersSent", d.match_rate AS "matchRate"
         FROM audience_connections l
         JOIN connections c ON c.customer_id = l.customer_id AND c.id = l.connection_id
         LEFT JOIN audience_destinations d ON d.customer_id = l.customer_id AND d.audience_id = l.audience_id AND d.connection_id = l.connection_id
        WHERE l.customer_id = $1 AND l.audience_id = $2
        ORDER BY l.connection_id`,
      [audienceId],
      transaction,
    );
    return rows.map((row) => ({
      ...row,
      connectionId: Number(row.connectionId),
      lastRunId: row.lastRunId === null ? null : Number(row.lastRunId),
      membersSent: Number(row.membersSent),
    }));
  }

  /** The platform list's id kept for a destination, linked or not (a removed destination keeps its list). */
  async platformAudienceId(audienceId: number, connectionId: number, transaction?: Transaction): Promise<string | null> {
    const { rows } = await this.tenantQuery<{ id: string | null }>(
      'SELECT platform_audience_id AS id FROM audience_destinations WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3',
      [audienceId, connectionId],
      transaction,
    );
    return rows[0]?.id ?? null;
  }

  /** Writes the named fields of a destination, creating its row on first use. */
  async update(audienceId: number, connectionId: number, update: DestinationUpdate, transaction?: Transaction): Promise<void> {
    const fields = (Object.keys(update) as (keyof DestinationUpdate)[]).filter((field) => update[field] !== undefined);
    if (fields.length === 0) return;
    const columns = fields.map((field) => COLUMNS[field]);
    const values = fields.map((field) => update[field]);
    await this.tenantQuery(
      `INSERT INTO audience_destinations (customer_id, audience_id, connection_id, ${columns.join(', ')})
       VALUES ($1, $2, $3, ${columns.map((_, index) => `$${index + 4}`).join(', ')})
       ON CONFLICT (customer_id, audience_id, connection_id) DO UPDATE SET ${columns.map((column) => `${column} = EXCLUDED.${column}`).join(', ')}`,
      [audienceId, connectionId, ...values],
      transaction,
    );
  }
}
