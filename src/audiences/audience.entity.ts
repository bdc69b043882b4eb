import { Check, Column, Entity, Index, JoinColumn, ManyToOne, OneToMany, type Relation } from 'typeorm';
import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';
import { AudienceConnection } from './audience-connection.entity.js';

export const SOURCE_TYPES = ['rules', 'model', 'upload'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const AUDIENCE_STATUSES = ['draft', 'active', 'archived'] as const;
export type AudienceStatus = (typeof AUDIENCE_STATUSES)[number];

@Entity({ name: 'audiences' })
@Check('audiences_source_type_check', `"source_type" IN ('rules', 'model', 'upload')`)
@Check('audiences_status_check', `"status" IN ('draft', 'active', 'archived')`)
@Check('audiences_min_score_check', `"min_score" IS NULL OR ("min_score" >= 0 AND "min_score" <= 1)`)
// Unique ignoring case: an expression index TypeORM cannot describe, so the migration owns it.
@Index('audiences_customer_name_lower_key', { synchronize: false })
@Index('audiences_customer_status_idx', ['customerId', 'status', 'id'])
@Index('audiences_customer_source_type_idx', ['customerId', 'sourceType', 'id'])
@Index('audiences_customer_model_instance_idx', ['customerId', 'modelInstanceId'])
@Index('audiences_customer_name_idx', ['customerId', 'name'])
@Index('audiences_customer_created_at_idx', ['customerId', 'createdAt'])
@Index('audiences_customer_updated_at_idx', ['customerId', 'updatedAt'])
export class Audience extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'audiences_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 2000, default: '' })
  description: string;

  @Column({ name: 'source_type', type: 'varchar', length: 16 })
  sourceType: SourceType;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  rules: Record<string, unknown>;

  @Column({ name: 'model_instance_id', type: 'bigint', nullable: true })
  modelInstanceId: number | null;

  /** Composite: the database itself cannot hold a reference to another workspace's model. */
  @ManyToOne(() => AiModelInstance, { onDelete: 'NO ACTION' })
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'audiences_model_instance_fkey' },
    { name: 'model_instance_id', referencedColumnName: 'id', foreignKeyConstraintName: 'audiences_model_instance_fkey' },
  ])
  modelInstance?: Relation<AiModelInstance>;

  @Column({ name: 'min_score', type: 'double precision', nullable: true })
  minScore: number | null;

  @Column({ type: 'varchar', length: 16, default: 'draft' })
  status: AudienceStatus;

  /** The member count as of `membersUpdatedAt`, written by the membership recompute (SPEC 10.2); read-only in the API. */
  @Column({ type: 'integer', nullable: true })
  size: number | null;

  /** When the members were last computed; null before the first computation. */
  @Column({ name: 'members_updated_at', type: 'timestamptz', nullable: true })
  membersUpdatedAt: Date | null;

  @OneToMany(() => AudienceConnection, (link) => link.audience)
  connectionLinks?: Relation<AudienceConnection[]>;
}
