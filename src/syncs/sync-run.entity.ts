import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Audience } from '../audiences/audience.entity.js';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Connection } from '../connections/connection.entity.js';

export const SYNC_TRIGGERS = ['manual', 'membership_change', 'schedule'] as const;
export type SyncTrigger = (typeof SYNC_TRIGGERS)[number];
export const SYNC_STATUSES = ['queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** A Google request whose verdict `requestStatus:retrieve` has not given yet. */
export interface PendingGoogleRequest {
  requestId: string;
  operation: 'ingest' | 'remove';
  members: number;
}

/**
 * One sync of one audience to one destination (SPEC 10.3). `attempts` counts the run's starts
 * (resumes included); `request_attempt` the tries of the platform request it is on, for the
 * backoff; `pending_requests` the Google requests still awaiting their verdict.
 */
@Entity({ name: 'sync_runs' })
@Check('sync_runs_trigger_check', `"trigger" IN ('manual', 'membership_change', 'schedule')`)
@Check(
  'sync_runs_status_check',
  `"status" IN ('queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled')`,
)
@Check('sync_runs_match_rate_check', `"match_rate" BETWEEN 0 AND 1`)
@Index('sync_runs_one_open_idx', ['customerId', 'audienceId', 'connectionId'], {
  unique: true,
  where: `"status" IN ('queued', 'running') AND NOT "dry_run"`,
})
@Index('sync_runs_customer_audience_idx', ['customerId', 'audienceId', 'id'])
@Index('sync_runs_customer_connection_idx', ['customerId', 'connectionId', 'id'])
@Index('sync_runs_customer_status_idx', ['customerId', 'status', 'id'])
@Index('sync_runs_customer_created_at_idx', ['customerId', 'createdAt'])
export class SyncRun extends TenantEntity {
  @Column({ name: 'audience_id', type: 'bigint' })
  audienceId: number;

  @ManyToOne(() => Audience, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'sync_runs_audience_fkey' },
    { name: 'audience_id', referencedColumnName: 'id', foreignKeyConstraintName: 'sync_runs_audience_fkey' },
  ])
  audience?: Relation<Audience>;

  @Column({ name: 'connection_id', type: 'bigint' })
  connectionId: number;

  @ManyToOne(() => Connection, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'sync_runs_connection_fkey' },
    { name: 'connection_id', referencedColumnName: 'id', foreignKeyConstraintName: 'sync_runs_connection_fkey' },
  ])
  connection?: Relation<Connection>;

  @Column({ type: 'varchar', length: 16 })
  platform: string;

  @Column({ name: 'platform_audience_id', type: 'varchar', length: 64, nullable: true })
  platformAudienceId: string | null;

  @Column({ type: 'varchar', length: 24 })
  trigger: SyncTrigger;

  @Column({ name: 'dry_run', type: 'boolean', default: false })
  dryRun: boolean;

  @Column({ type: 'varchar', length: 24, default: 'queued' })
  status: SyncStatus;

  @Column({ name: 'planned_add', type: 'integer', nullable: true })
  plannedAdd: number | null;

  @Column({ name: 'planned_remove', type: 'integer', nullable: true })
  plannedRemove: number | null;

  @Column({ type: 'integer', default: 0 })
  added: number;

  @Column({ type: 'integer', default: 0 })
  removed: number;

  @Column({ type: 'integer', default: 0 })
  failed: number;

  @Column({ name: 'skipped_consent', type: 'integer', default: 0 })
  skippedConsent: number;

  @Column({ name: 'skipped_unmatchable', type: 'integer', default: 0 })
  skippedUnmatchable: number;

  @Column({ name: 'failed_by_reason', type: 'jsonb', default: () => "'{}'" })
  failedByReason: Record<string, number>;

  @Column({ name: 'match_rate', type: 'double precision', nullable: true })
  matchRate: number | null;

  @Column({ name: 'error_code', type: 'varchar', length: 64, nullable: true })
  errorCode: string | null;

  @Column({ name: 'error_detail', type: 'varchar', length: 1000, nullable: true })
  errorDetail: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'request_attempt', type: 'integer', default: 0 })
  requestAttempt: number;

  @Column({ name: 'pending_requests', type: 'jsonb', default: () => "'[]'" })
  pendingRequests: PendingGoogleRequest[];

  @Column({ name: 'poll_attempts', type: 'integer', default: 0 })
  pollAttempts: number;

  @Column({ name: 'queued_at', type: 'timestamptz', default: () => 'now()' })
  queuedAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
