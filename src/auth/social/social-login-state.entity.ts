import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../../users/user.entity.js';

/**
 * One social login in progress, between the authorization URL and the POST that finishes it. The
 * row is the server-side half of the `state` (djoser keeps it in a session cookie, which
 * single-page apps lose): found by the state's hash, deleted when used, gone after ten minutes.
 */
@Entity({ name: 'social_login_states' })
export class SocialLoginState {
  /** SHA-256 of the state: the state itself is a bearer value and is never stored. */
  @PrimaryColumn({ name: 'state_hash', type: 'bytea' })
  stateHash: Buffer;

  @Column({ type: 'varchar', length: 32 })
  provider: string;

  @Column({ name: 'redirect_uri', type: 'varchar', length: 2048 })
  redirectUri: string;

  /** PKCE: the verifier whose S256 challenge went into the authorization URL. */
  @Column({ name: 'code_verifier', type: 'varchar', length: 128 })
  codeVerifier: string;

  /** OpenID Connect: the ID token must carry this nonce. */
  @Column({ type: 'varchar', length: 128 })
  nonce: string;

  /**
   * Set when a signed-in user started the flow to link an account (the GET carried their access
   * token): only that user's POST may finish it. Null for a login, which no token may finish.
   */
  @Index('social_login_states_user_id_idx')
  @Column({ name: 'user_id', type: 'bigint', nullable: true })
  userId: number | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'social_login_states_user_id_fkey' })
  user?: Relation<User>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Index('social_login_states_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
