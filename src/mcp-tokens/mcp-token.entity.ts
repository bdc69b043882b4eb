import {
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
import { User } from '../users/user.entity.js';

/** A user's personal MCP token (SPEC section 2): stored as a prefix and a SHA-256 of the whole token. */
@Entity({ name: 'mcp_tokens' })
@Index('mcp_tokens_customer_user_idx', ['customerId', 'userId', 'id'])
export class McpToken {
  @PrimaryColumn({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'mcp_tokens_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ name: 'user_id', type: 'bigint' })
  userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'mcp_tokens_user_id_fkey' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Index('mcp_tokens_prefix_key', { unique: true })
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Column({ name: 'token_hash', type: 'bytea' })
  tokenHash: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
