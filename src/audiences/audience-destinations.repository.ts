import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { prepared } from '../database/prepared-statements.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type AttachedValue, TenantRepository } from '../common/tenancy/tenant-repository.js';
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

/**
 * An audience's destinations (its linked connections, in connection order) with their connections'
 * state and what its syncs left, as one JSON array over the audience row `t`: read with the audience
 * itself in one statement (`getWithDestinations`), or alone (`forAudience`).
 */
const DESTINATIONS_OF_AUDIENCE: AttachedValue = {
  as: 'destinations',
  select: `coalesce((SELECT json_agg(json_build_object(
       'connectionId', l.connection_id, 'platform', c.platform, 'connectionStatus', c.status,
       'connectionStatusReason', c.status_reason, 'connectionScopes', c.scopes,
       'customerMatchTermsAccepted', c.customer_match_terms_accepted, 'platformAudienceId', d.platform_audience_id,
       'statusReason', d.status_reason, 'lastRunId', d.last_run_id, 'lastRunStatus', d.last_run_status,
       'lastSyncedAt', d.last_synced_at, 'membersSent', coalesce(d.members_sent, 0), 'matchRate', d.match_rate)
       ORDER BY l.connection_id)
     FROM audience_connections l
     JOIN connections c ON c.customer_id = l.customer_id AND c.id = l.connection_id
     LEFT JOIN audience_destinations d ON d.customer_id = l.customer_id AND d.audience_id = l.audience_id AND d.connection_id = l.connection_id
    WHERE l.customer_id = t.customer_id AND l.audience_id = t.id), '[]')`,
};

/** The destinations alone, on the audience reads inside a write: a named prepared statement (src/database/prepared-statements.ts). */
const DESTINATIONS_SQL = prepared(
  `SELECT ${DESTINATIONS_OF_AUDIENCE.select} AS destinations FROM audiences t WHERE t.customer_id = $1 AND t.id = $2`,
);

/** The JSON of a destination as read; its one timestamp arrives as ISO text. */
type DestinationJson = Omit<DestinationRow, 'lastSyncedAt'> & { lastSyncedAt: string | null };

function destinationsOf(json: DestinationJson[]): DestinationRow[] {
  return json.map((row) => ({ ...row, lastSyncedAt: row.lastSyncedAt === null ? null : new Date(row.lastSyncedAt) }));
}

/** All SQL about `audience_destinations`: read with the audience, written by its syncs. */
@Injectable()
export class AudienceDestinationsRepository extends TenantRepository<Audience> {
  constructor(@InjectRepository(Audience) audiences: Repository<Audience>, tenants: TenantContext) {
    super(audiences, tenants, 'audience');
  }

  /** The audience with its destinations, in one statement; a 404 when it is missing. */
  async getWithDestinations(audienceId: number): Promise<{ audience: Audience; destinations: DestinationRow[] }> {
    const { destinations, ...audience } = await this.getByIdWith<Audience & { destinations: DestinationJson[] }>(
      audienceId,
      DESTINATIONS_OF_AUDIENCE,
    );
    return { audience: audience as Audience, destinations: destinationsOf(destinations) };
  }

  /** The audience's destinations (its linked connections), each with what its syncs left, in connection order. */
  async forAudience(audienceId: number, transaction?: Transaction): Promise<DestinationRow[]> {
    const { rows } = await this.tenantQuery<{ destinations: DestinationJson[] }>(DESTINATIONS_SQL, [audienceId], transaction);
    return destinationsOf(rows[0]?.destinations ?? []);
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
