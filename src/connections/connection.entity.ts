import { Check, Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { TenantEntity } from '../common/tenancy/tenant-entity.js';
import { Customer } from '../customers/customer.entity.js';
import { User } from '../users/user.entity.js';

export const PLATFORMS = ['google_ads', 'meta_ads'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const CONNECTION_STATUSES = ['active', 'expired', 'revoked', 'error'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** An authorised link to one Google Ads or Meta Ads account (SPEC section 3). OAuth tokens are stored encrypted only. */
@Entity({ name: 'connections' })
@Check('connections_platform_check', `"platform" IN ('google_ads', 'meta_ads')`)
@Check('connections_status_check', `"status" IN ('active', 'expired', 'revoked', 'error')`)
// Customer Match is Google's (SPEC 10.3): a Meta connection can never carry the acceptance.
@Check('connections_customer_match_terms_check', `"platform" = 'google_ads' OR NOT "customer_match_terms_accepted"`)
@Index('connections_customer_account_key', ['customerId', 'platform', 'externalAccountId'], { unique: true })
@Index('connections_customer_status_idx', ['customerId', 'status', 'id'])
@Index('connections_customer_name_idx', ['customerId', 'accountName'])
@Index('connections_customer_created_at_idx', ['customerId', 'createdAt'])
@Index('connections_customer_updated_at_idx', ['customerId', 'updatedAt'])
// The one index that does not lead with customer_id: the token sweep looks across workspaces.
@Index('connections_status_token_expires_at_idx', ['status', 'tokenExpiresAt'])
export class Connection extends TenantEntity {
  @ManyToOne(() => Customer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'connections_customer_id_fkey' })
  customer?: Relation<Customer>;

  @Column({ type: 'varchar', length: 16 })
  platform: Platform;

  @Column({ name: 'external_account_id', type: 'varchar', length: 64 })
  externalAccountId: string;

  @Column({ name: 'account_name', type: 'varchar', length: 255 })
  accountName: string;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  status: ConnectionStatus;

  /**
   * Why the connection is not active, machine-readable: `invalid_grant` (the grant was revoked or
   * expired at the provider), `token_expired`, `access_revoked`; null when active. An active Google
   * connection whose grant lacks a scope reads `scope_missing` in the API without it being stored
   * here (connection-readiness.ts), so a grant that gains the scope needs no second write.
   */
  @Column({ name: 'status_reason', type: 'varchar', length: 64, nullable: true })
  statusReason: string | null;

  /** The scopes the grant holds, as the token endpoint's `scope` field named them (refreshes included). */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  scopes: string[];

  /**
   * Google only: an admin of the workspace declared Google's Customer Match terms accepted for this
   * account (SPEC 10.3); until then its audience syncs fail with `terms_not_accepted`.
   */
  @Column({ name: 'customer_match_terms_accepted', type: 'boolean', default: false })
  customerMatchTermsAccepted: boolean;

  @Column({ name: 'connected_by', type: 'bigint', nullable: true })
  connectedBy: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'connected_by', foreignKeyConstraintName: 'connections_connected_by_fkey' })
  connectedByUser?: Relation<User>;

  /** AES-256-GCM ciphertexts (key id, nonce, tag included); never in a response or a log. */
  @Column({ name: 'access_token_encrypted', type: 'bytea', nullable: true, select: false })
  accessTokenEncrypted: Buffer | null;

  @Column({ name: 'refresh_token_encrypted', type: 'bytea', nullable: true, select: false })
  refreshTokenEncrypted: Buffer | null;

  @Column({ name: 'token_expires_at', type: 'timestamptz', nullable: true })
  tokenExpiresAt: Date | null;

  @Column({ name: 'last_refreshed_at', type: 'timestamptz', nullable: true })
  lastRefreshedAt: Date | null;
}
