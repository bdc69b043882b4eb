import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';

export const IMPORT_TARGETS = ['people', 'audience'] as const;
export type ImportTarget = (typeof IMPORT_TARGETS)[number];
export const IMPORT_MODES = ['add', 'remove', 'replace'] as const;
export type ImportMode = (typeof IMPORT_MODES)[number];
export const IMPORT_STATUSES = ['receiving', 'queued', 'processing', 'succeeded', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** One sample of a rejected row (SPEC 10.1): its 1-based line (a CSV header is line 1) and error codes by field. */
export interface ImportRowError {
  line: number;
  errors: Record<string, string[]>;
}

/**
 * One file import (SPEC 10.1, Imports). `receiving` is ours: the upload is still streaming into
 * `import_rows`; it is never answered, since the 202 comes once the file is staged (`queued`), and
 * a `receiving` import is failed by the upload itself if the stream breaks.
 */
@Entity({ name: 'imports' })
@Check('imports_status_check', `"status" IN ('receiving', 'queued', 'processing', 'succeeded', 'failed')`)
@Check('imports_target_check', `"target" IN ('people', 'audience')`)
@Index('imports_customer_created_at_idx', ['customerId', 'createdAt'])
export class Import extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'imports_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 16 })
  target: ImportTarget;

  @Column({ name: 'audience_id', type: 'bigint', nullable: true })
  audienceId: number | null;

  @Column({ type: 'varchar', length: 8, nullable: true })
  mode: ImportMode | null;

  @Column({ type: 'varchar', length: 16 })
  status: ImportStatus;

  @Column({ name: 'rows_total', type: 'bigint', default: 0 })
  rowsTotal: number;

  @Column({ name: 'rows_accepted', type: 'bigint', default: 0 })
  rowsAccepted: number;

  @Column({ name: 'rows_rejected', type: 'bigint', default: 0 })
  rowsRejected: number;

  @Column({ name: 'rejected_by_reason', type: 'jsonb', default: () => "'{}'" })
  rejectedByReason: Record<string, number>;

  @Column({ name: 'errors_sample', type: 'jsonb', default: () => "'[]'" })
  errorsSample: ImportRowError[];

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
