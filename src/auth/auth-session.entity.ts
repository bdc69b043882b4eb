import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity.js';

/**
 * One login: what a pair of JWTs belongs to (their `sid` claim). Logout, refresh-token reuse and
 * user deactivation end it, and with it every token it issued.
 */
@Entity({ name: 'auth_sessions' })
export class AuthSession {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Index('auth_sessions_user_id_idx')
  @Column({ name: 'user_id', type: 'bigint' })
  userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'auth_sessions_user_id_fkey' })
  user?: Relation<User>;

  @Column({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  /** The only refresh token of this session that may still be used (rotation, SPEC section 2). */
  @Column({ name: 'refresh_jti', type: 'uuid' })
  refreshJti: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'revoked_reason', type: 'varchar', length: 32, nullable: true })
  revokedReason: string | null;
}
