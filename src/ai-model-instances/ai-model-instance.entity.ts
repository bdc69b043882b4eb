import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';

export const MODEL_TYPES = ['propensity', 'lifetime_value', 'churn', 'lookalike'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

export const MODEL_STATUSES = ['pending', 'training', 'ready', 'failed', 'archived'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

@Entity({ name: 'ai_model_instances' })
@Check('ai_model_instances_model_type_check', `"model_type" IN ('propensity', 'lifetime_value', 'churn', 'lookalike')`)
@Check('ai_model_instances_status_check', `"status" IN ('pending', 'training', 'ready', 'failed', 'archived')`)
@Index('ai_model_instances_customer_status_idx', ['customerId', 'status', 'id'])
@Index('ai_model_instances_customer_model_type_idx', ['customerId', 'modelType', 'id'])
@Index('ai_model_instances_customer_name_idx', ['customerId', 'name'])
@Index('ai_model_instances_customer_created_at_idx', ['customerId', 'createdAt'])
@Index('ai_model_instances_customer_updated_at_idx', ['customerId', 'updatedAt'])
export class AiModelInstance extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'ai_model_instances_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'model_type', type: 'varchar', length: 32 })
  modelType: ModelType;

  @Column({ name: 'base_model', type: 'varchar', length: 100 })
  baseModel: string;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  parameters: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: ModelStatus;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metrics: Record<string, unknown>;

  /** +1 each time training starts. */
  @Column({ type: 'integer', default: 0 })
  version: number;
}
