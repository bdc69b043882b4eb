import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Customer } from '../../customers/customer.entity.js';
import { User } from '../../users/user.entity.js';

/**
 * One "Connect Google Ads / Meta Ads" flow in progress (SPEC section 6). The provider's callback
 * carries no credential: this row, found by the hash of its state, says who started the flow, in
 * which workspace, for which platform, with which PKCE verifier, and where the browser goes after.
 * Single use (deleted when read), ten minutes.
 */
@Entity({ name: 'connection_flow_states' })
export class ConnectionFlowState {
  @PrimaryColumn({ name: 'state_hash', type: 'bytea' })
  stateHash: Buffer;

  @Column({ type: 'varchar', length: 16 })
  platform: string;

  @Index('connection_flow_states_customer_id_idx')
  @Column({ name: 'customer_id', type: 'bigint' })
  customerId: number;

  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'connection_flow_states_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Index('connection_flow_states_user_id_idx')
  @Column({ name: 'user_id', type: 'bigint' })
  userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'connection_flow_states_user_id_fkey' })
  user?: Relation<User>;

  @Column({ name: 'code_verifier', type: 'varchar', length: 128 })
  codeVerifier: string;

  /** This service's callback URL as sent in the authorization request; the code exchange repeats it. */
  @Column({ name: 'redirect_uri', type: 'varchar', length: 2048 })
  redirectUri: string;

  /** Where the browser is sent after the callback, with the outcome added to its query. */
  @Column({ name: 'return_url', type: 'varchar', length: 2048 })
  returnUrl: string;

  /**
   * SHA-256 of the flow cookie of the browser that started the flow: the callback must come back
   * in that browser, so a consent link cannot be sent to someone else to connect their accounts
   * into the starter's workspace.
   */
  @Column({ name: 'browser_hash', type: 'bytea' })
  browserHash: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Index('connection_flow_states_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
