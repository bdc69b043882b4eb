import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { SocialIdentity } from './social-identity.entity.js';
import { SocialLoginState } from './social-login-state.entity.js';

export type NewLoginState = Pick<
  SocialLoginState,
  'stateHash' | 'provider' | 'redirectUri' | 'codeVerifier' | 'nonce' | 'userId' | 'expiresAt'
>;

/**
 * All SQL of social login: the pending states and the provider identities linked to users. Not a
 * TenantRepository: both are found before the request has a workspace (from a state, or from the
 * provider's subject), and each leads to exactly one user, whose workspace the session then carries.
 */
@Injectable()
export class SocialLoginRepository {
  constructor(
    @InjectRepository(SocialLoginState) private readonly states: Repository<SocialLoginState>,
    @InjectRepository(SocialIdentity) private readonly identities: Repository<SocialIdentity>,
  ) {}

  /** Stores a new state and drops the expired ones (an index range scan on expires_at). */
  async insertState(state: NewLoginState, now: Date): Promise<void> {
    await this.states.manager.query(`DELETE FROM social_login_states WHERE expires_at <= $1`, [now]);
    await this.states.insert(state);
  }

  /** Removes and returns the state: one DELETE … RETURNING (TypeORM answers an UPDATE or DELETE with [rows, count]), so a state is used at most once even by two racing requests. */
  async takeState(stateHash: Buffer): Promise<Omit<NewLoginState, 'stateHash'> | null> {
    const [rows]: [
      { provider: string; redirect_uri: string; code_verifier: string; nonce: string; user_id: number | null; expires_at: Date }[],
      number,
    ] = await this.states.manager.query(
      `DELETE FROM social_login_states WHERE state_hash = $1 RETURNING provider, redirect_uri, code_verifier, nonce, user_id, expires_at`,
      [stateHash],
    );
    const row = rows[0];
    return row
      ? {
          provider: row.provider,
          redirectUri: row.redirect_uri,
          codeVerifier: row.code_verifier,
          nonce: row.nonce,
          userId: row.user_id,
          expiresAt: row.expires_at,
        }
      : null;
  }

  /** The user a provider identity is linked to, noting the login. */
  async userOf(provider: string, subject: string, now: Date): Promise<number | null> {
    const [rows]: [{ user_id: number }[], number] = await this.identities.manager.query(
      `UPDATE social_identities SET last_login_at = $3 WHERE provider = $1 AND subject = $2 RETURNING user_id`,
      [provider, subject, now],
    );
    return rows[0]?.user_id ?? null;
  }

  /**
   * Links the identity to the user unless it is linked already, and returns the user it is linked
   * to afterwards: `userId` when this call (or an earlier one) linked it to them, another user's id
   * when it belongs to someone else. Two racing first logins both end on the one row.
   */
  async link(provider: string, subject: string, userId: number, email: string | null, now: Date): Promise<number> {
    const rows: { user_id: number }[] = await this.identities.manager.query(
      `INSERT INTO social_identities (provider, subject, user_id, email, last_login_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (provider, subject) DO UPDATE SET last_login_at = EXCLUDED.last_login_at
       RETURNING user_id`,
      [provider, subject, userId, email, now],
    );
    return rows[0]!.user_id;
  }
}
