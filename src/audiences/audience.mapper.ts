import { reauthorizeRequired, statusReasonOf } from '../connections/connection-readiness.js';
import type { Connection } from '../connections/connection.entity.js';
import type { DestinationRow } from './audience-destinations.repository.js';
import type { AudienceDestinationDto, AudienceDetailDto, AudienceDto } from './dto/audience.dto.js';
import type { Audience } from './audience.entity.js';

/** Field by field, so a new column never reaches a response by accident. */
export function toAudienceDto(audience: Audience, connectionIds: number[]): AudienceDto {
  return {
    id: audience.id,
    customer: audience.customerId,
    name: audience.name,
    description: audience.description,
    source_type: audience.sourceType,
    rules: audience.rules,
    model_instance: audience.modelInstanceId,
    min_score: audience.minScore,
    connections: connectionIds,
    status: audience.status,
    size: audience.size,
    members_updated_at: audience.membersUpdatedAt?.toISOString() ?? null,
    created_at: audience.createdAt.toISOString(),
    updated_at: audience.updatedAt.toISOString(),
  };
}

/** The audience with its destinations, as one object is answered. */
export function toAudienceDetailDto(audience: Audience, connectionIds: number[], destinations: DestinationRow[]): AudienceDetailDto {
  return { ...toAudienceDto(audience, connectionIds), destinations: destinations.map(toDestinationDto) };
}

function toDestinationDto(row: DestinationRow): AudienceDestinationDto {
  return {
    connection: row.connectionId,
    platform: row.platform,
    platform_audience_id: row.platformAudienceId,
    status_reason: destinationReason(row),
    last_run: row.lastRunId === null ? null : { id: row.lastRunId, status: row.lastRunStatus ?? 'queued' },
    last_synced_at: row.lastSyncedAt === null ? null : new Date(row.lastSyncedAt).toISOString(),
    members_sent: row.membersSent,
    match_rate: row.matchRate,
  };
}

/** The destination's own problem first (a flagged audience), then the connection's: a lost grant, a missing scope, the terms. */
function destinationReason(row: DestinationRow): string | null {
  if (row.statusReason !== null) return row.statusReason;
  const connection = {
    platform: row.platform as Connection['platform'],
    status: row.connectionStatus as Connection['status'],
    statusReason: row.connectionStatusReason,
    scopes: row.connectionScopes,
  };
  if (reauthorizeRequired(connection)) return statusReasonOf(connection) ?? row.connectionStatus;
  if (row.platform === 'google_ads' && !row.customerMatchTermsAccepted) return 'terms_not_accepted';
  return null;
}
