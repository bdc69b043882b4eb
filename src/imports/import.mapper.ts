import type { ImportDto } from './dto/import.dto.js';
import type { Import } from './import.entity.js';

/** Field by field (STYLE): a new column never reaches a response by accident. */
export function toImportDto(row: Import): ImportDto {
  return {
    id: Number(row.id),
    customer: Number(row.customerId),
    target: row.target,
    audience: row.audienceId === null ? null : Number(row.audienceId),
    mode: row.mode,
    // `receiving` is never committed (the upload's transaction), so a reader never sees it.
    status: row.status,
    rows_total: Number(row.rowsTotal),
    rows_accepted: Number(row.rowsAccepted),
    rows_rejected: Number(row.rowsRejected),
    rejected_by_reason: row.rejectedByReason,
    errors_sample: row.errorsSample,
    created_at: new Date(row.createdAt).toISOString(),
    updated_at: new Date(row.updatedAt).toISOString(),
    started_at: row.startedAt === null ? null : new Date(row.startedAt).toISOString(),
    finished_at: row.finishedAt === null ? null : new Date(row.finishedAt).toISOString(),
  };
}
