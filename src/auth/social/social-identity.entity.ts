import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { User } from '../../users/user.entity.js';

/**
 * A provider account linked to a user: `(provider, subject) → user`. Logins match on it first;
 * it is written on a first login by verified email, or when a signed-in user links the account.
 */
@Entity({ name: 'social_identities' })
@Index('social_identities_provider_subject_key', ['provider', 'subject'], { unique: true })
export class SocialIdentity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'varchar', length: 32 })
  provider: string;

  /** Google's `sub`, Facebook's app-scoped user id. */
  @Column({ type: 'varchar', length: 255 })
  subject: string;

  @Index('social_identities_user_id_idx')
  @Column({ name: 'user_id', type: 'bigint' })
  userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'social_identities_user_id_fkey' })
  user?: Relation<User>;

  /** The email the provider gave when the link was made, for the operator's eyes only. */
  @Column({ type: 'varchar', length: 254, nullable: true })
  email: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true })
  lastLoginAt: Date | null;
}
