import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Customer } from '../customers/customer.entity.js';

export const API_KEY_SCOPES = ['read', 'write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * A static API key of a workspace (SPEC section 2). Only the prefix (to find the row) and a
 * SHA-256 of the whole key (to check it) are stored; the key itself is shown once.
 */
@Entity({ name: 'api_keys' })
@Check('api_keys_scope_check', `"scope" IN ('read', 'write')`)
export class ApiKey {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  /** Unique on its own (one sequence); the primary key leads with the tenant like every tenant table. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'api_keys_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Index('api_keys_prefix_key', { unique: true })
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Column({ name: 'key_hash', type: 'bytea' })
  keyHash: Buffer;

  @Column({ type: 'varchar', length: 8, default: 'write' })
  scope: ApiKeyScope;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  /** Set by `rotate`: the key that replaces this one, which stays valid for the grace period. */
  @Column({ name: 'replaced_by_id', type: 'bigint', nullable: true })
  replacedById: number | null;

  /** Composite, so a key can only be replaced by a key of the same workspace. */
  @ManyToOne(() => ApiKey)
  @JoinColumn([
    { name: 'customer_id', referencedColumnName: 'customerId', foreignKeyConstraintName: 'api_keys_replaced_by_fkey' },
    { name: 'replaced_by_id', referencedColumnName: 'id', foreignKeyConstraintName: 'api_keys_replaced_by_fkey' },
  ])
  replacedBy?: Relation<ApiKey>;
}
