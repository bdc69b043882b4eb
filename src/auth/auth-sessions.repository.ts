import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import type { UserRole } from '../common/access/user-role.js';
import { AuthSession } from './auth-session.entity.js';
import { entityManagerOf, type Transaction } from '../common/tenancy/transactions.js';

/** A session joined with its user: what an access token's request needs to know. */
export interface SessionRow {
  userId: number;
  customerId: number;
  role: UserRole;
  isActive: boolean;
  revokedAt: Date | null;
  expiresAt: Date;
}

export type NewSession = Pick<AuthSession, 'id' | 'userId' | 'customerId' | 'refreshJti' | 'expiresAt'>;

/**
 * All SQL about login sessions. Not a TenantRepository: a session is found by its id, from a
 * token, before the request has a workspace.
 */
@Injectable()
export class AuthSessionsRepository {
  constructor(@InjectRepository(AuthSession) private readonly sessions: Repository<AuthSession>) {}

  async insert(session: NewSession): Promise<void> {
    await this.sessions.insert(session);
  }

  findById(id: string): Promise<AuthSession | null> {
    return this.sessions.findOneBy({ id: Equal(id) });
  }

  /** The session with its user's role and state, in one query (the cold path of every JWT request). */
  async findWithUser(id: string): Promise<SessionRow | null> {
    const rows: { user_id: number; customer_id: number; role: UserRole; is_active: boolean; revoked_at: Date | null; expires_at: Date }[] =
      await this.sessions.manager.query(
        `SELECT s.user_id, s.customer_id, u.role, u.is_active, s.revoked_at, s.expires_at
           FROM auth_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.id = $1`,
        [id],
      );
    const row = rows[0];
    if (!row) return null;
    return {
      userId: row.user_id,
      customerId: row.customer_id,
      role: row.role,
      isActive: row.is_active,
      revokedAt: row.revoked_at,
      expiresAt: row.expires_at,
    };
  }

  /**
   * Swaps the session's refresh token for a new one, only if `jti` is still the current one and
   * the session is live: one conditional UPDATE, so two uses of one token cannot both succeed.
   */
  async rotate(id: string, jti: string, next: Pick<AuthSession, 'refreshJti' | 'expiresAt'>): Promise<boolean> {
    const result = await this.sessions
      .createQueryBuilder()
      .update(AuthSession)
      .set(next)
      .where('id = :id AND refresh_jti = :jti AND revoked_at IS NULL', { id, jti })
      .execute();
    return result.affected === 1;
  }

  async revoke(id: string, reason: 'logout' | 'refresh_reuse', transaction?: Transaction): Promise<void> {
    await (transaction === undefined ? this.sessions.manager : entityManagerOf(transaction))
      .createQueryBuilder()
      .update(AuthSession)
      .set({ revokedAt: () => 'now()', revokedReason: reason })
      .where('id = :id AND revoked_at IS NULL', { id })
      .execute();
  }
}
