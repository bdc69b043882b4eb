import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { Audience } from '../audiences/audience.entity.js';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Connection } from '../connections/connection.entity.js';
import { Customer } from '../customers/customer.entity.js';

export const SIGNAL_TYPES = ['conversion', 'value', 'score'] as const;
export type SignalType = (typeof SIGNAL_TYPES)[number];

/** SPEC section 3: signal status is an integer code. */
export const SignalStatus = { draft: 0, active: 1, paused: 2, failed: 3, archived: 4 } as const;
export type SignalStatusCode = (typeof SignalStatus)[keyof typeof SignalStatus];
export const SIGNAL_STATUS_CODES = Object.values(SignalStatus) as SignalStatusCode[];

@Entity({ name: 'signals' })
@Check('signals_signal_type_check', `"signal_type" IN ('conversion', 'value', 'score')`)
@Check('signals_status_check', `"status" BETWEEN 0 AND 4`)
@Index('signals_customer_status_idx', ['customerId', 'status', 'id'])
@Index('signals_customer_signal_type_idx', ['customerId', 'signalType', 'id'])
@Index('signals_customer_model_instance_idx', ['customerId', 'modelInstanceId'])
@Index('signals_customer_audience_idx', ['customerId', 'audienceId'])
@Index('signals_customer_connection_idx', ['customerId', 'connectionId'])
@Index('signals_customer_name_idx', ['customerId', 'name'])
@Index('signals_customer_created_at_idx', ['customerId', 'createdAt'])
@Index('signals_customer_updated_at_idx', ['customerId', 'updatedAt'])
export class Signal extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'signals_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 2000, default: '' })
  description: string;

  @Column({ name: 'signal_type', type: 'varchar', length: 16 })
  signalType: SignalType;

  @Column({ type: 'smallint', default: 0 })
  status: SignalStatusCode;

  @Column({ name: 'model_instance_id', type: 'bigint', nullable: true })
  modelInstanceId: number | null;

  @ManyToOne(() => AiModelInstance, { onDelete: 'NO ACTION' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'signals_model_instance_fkey' },
    { name: 'model_instance_id', referencedColumnName: 'id', foreignKeyConstraintName: 'signals_model_instance_fkey' },
  ])
  modelInstance?: Relation<AiModelInstance>;

  @Column({ name: 'audience_id', type: 'bigint', nullable: true })
  audienceId: number | null;

  @ManyToOne(() => Audience, { onDelete: 'NO ACTION' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'signals_audience_fkey' },
    { name: 'audience_id', referencedColumnName: 'id', foreignKeyConstraintName: 'signals_audience_fkey' },
  ])
  audience?: Relation<Audience>;

  @Column({ name: 'connection_id', type: 'bigint', nullable: true })
  connectionId: number | null;

  /** Deleting a connection clears this in the same transaction (ConnectionsService), so NO ACTION here is never hit. */
  @ManyToOne(() => Connection, { onDelete: 'NO ACTION' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'signals_connection_fkey' },
    { name: 'connection_id', referencedColumnName: 'id', foreignKeyConstraintName: 'signals_connection_fkey' },
  ])
  connection?: Relation<Connection>;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  config: Record<string, unknown>;

  /** Why the delivery pipeline turned the signal `failed` (SPEC 10.4); cleared when it is active again. */
  @Column({ name: 'status_reason', type: 'varchar', length: 500, nullable: true })
  statusReason: string | null;
}
