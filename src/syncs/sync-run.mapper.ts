import type { SyncRunDto } from './dto/sync-run.dto.js';
import type { SyncRun } from './sync-run.entity.js';

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** Field by field (STYLE): a new column (the retry bookkeeping, say) never reaches a response by accident. */
export function toSyncRunDto(run: SyncRun): SyncRunDto {
  return {
    id: Number(run.id),
    customer: Number(run.customerId),
    audience: Number(run.audienceId),
    connection: Number(run.connectionId),
    platform_audience_id: run.platformAudienceId,
    trigger: run.trigger,
    dry_run: run.dryRun,
    status: run.status,
    planned_add: run.plannedAdd,
    planned_remove: run.plannedRemove,
    added: run.added,
    removed: run.removed,
    failed: run.failed,
    skipped_consent: run.skippedConsent,
    skipped_unmatchable: run.skippedUnmatchable,
    failed_by_reason: run.failedByReason,
    match_rate: run.matchRate,
    error_code: run.errorCode,
    error_detail: run.errorDetail,
    attempts: run.attempts,
    queued_at: iso(run.queuedAt)!,
    started_at: iso(run.startedAt),
    finished_at: iso(run.finishedAt),
  };
}
