import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One shared request budget (SPEC 10.3): a token bucket per Meta ad account (`meta:act_…`) or for
 * the deployment's Google Cloud project (`google`), refilled by elapsed time. A row, so every
 * worker process draws from the same budget. Not workspace data.
 */
@Entity({ name: 'sync_rate_budgets' })
export class SyncRateBudget {
  @PrimaryColumn({ type: 'varchar', length: 96 })
  scope: string;

  @Column({ type: 'double precision' })
  tokens: number;

  @Column({ name: 'refilled_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  refilledAt: Date;
}
