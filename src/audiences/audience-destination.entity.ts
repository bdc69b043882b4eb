import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Connection } from '../connections/connection.entity.js';
import { Audience } from './audience.entity.js';

/**
 * What one destination of an audience holds (SPEC 10.3, the audience's `destinations`): the
 * platform list, the last run and what it left. Written by the syncs; read with the audience.
 * It outlives the link in `audience_connections`: a removed destination keeps its platform list,
 * and adding the connection back finds it again.
 */
@Entity({ name: 'audience_destinations' })
export class AudienceDestination {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryColumn({ name: 'audience_id', type: 'bigint' })
  audienceId: number;

  @PrimaryColumn({ name: 'connection_id', type: 'bigint' })
  connectionId: number;

  @ManyToOne(() => Audience, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'audience_destinations_audience_fkey' },
    { name: 'audience_id', referencedColumnName: 'id', foreignKeyConstraintName: 'audience_destinations_audience_fkey' },
  ])
  audience?: Relation<Audience>;

  @ManyToOne(() => Connection, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'audience_destinations_connection_fkey' },
    { name: 'connection_id', referencedColumnName: 'id', foreignKeyConstraintName: 'audience_destinations_connection_fkey' },
  ])
  connection?: Relation<Connection>;

  @Column({ name: 'platform_audience_id', type: 'varchar', length: 64, nullable: true })
  platformAudienceId: string | null;

  @Column({ name: 'status_reason', type: 'varchar', length: 64, nullable: true })
  statusReason: string | null;

  @Column({ name: 'last_run_id', type: 'bigint', nullable: true })
  lastRunId: number | null;

  @Column({ name: 'last_run_status', type: 'varchar', length: 24, nullable: true })
  lastRunStatus: string | null;

  @Column({ name: 'last_synced_at', type: 'timestamptz', nullable: true })
  lastSyncedAt: Date | null;

  @Column({ name: 'members_sent', type: 'integer', default: 0 })
  membersSent: number;

  @Column({ name: 'match_rate', type: 'double precision', nullable: true })
  matchRate: number | null;
}
