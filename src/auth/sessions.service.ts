import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { Clock } from '../common/time/clock.js';
import type { UserRole } from '../common/access/user-role.js';
import type { User } from '../users/user.entity.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { AuthSessionsRepository } from './auth-sessions.repository.js';
import { CredentialCache, publishInvalidation } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import { type TokenPair, TokenService } from './tokens/token.service.js';

/** What an access token's request needs to know about its session, cached between requests. */
export interface SessionState {
  userId: number;
  customerId: number;
  role: UserRole;
  usable: boolean;
  expiresAtMs: number;
}

export const tokenNotValid = () =>
  new ApiError(401, 'token_not_valid', 'Token is invalid or expired.', undefined, {
    'www-authenticate': 'Bearer realm="api", error="invalid_token"',
  });

/** Login sessions: issue, rotate with reuse detection, end (SPEC section 2). */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: AuthSessionsRepository,
    private readonly transactions: Transactions,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
    @Inject(CREDENTIAL_CACHE) private readonly cache: CredentialCache,
  ) {}

  async start(user: User): Promise<TokenPair> {
    const sessionId = randomUUID();
    const pair = this.tokens.issuePair({ userId: user.id, customerId: user.customerId, role: user.role, sessionId });
    await this.sessions.insert({
      id: sessionId,
      userId: user.id,
      customerId: user.customerId,
      refreshJti: pair.refreshJti,
      expiresAt: pair.refreshExpiresAt,
    });
    return { access: pair.access, refresh: pair.refresh };
  }

  /**
   * Spends a refresh token for a new pair. Only the session's current refresh token is accepted;
   * an older one means it was copied, so the whole session dies (reuse detection). The swap is one
   * conditional UPDATE, so two concurrent uses of one token cannot both succeed.
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const claims = this.tokens.verify(refreshToken, 'refresh');
    if (!claims) throw tokenNotValid();
    const state = await this.loadState(claims.sid);
    if (!state || !state.usable || state.expiresAtMs <= this.clock.nowMs()) throw tokenNotValid();

    const pair = this.tokens.issuePair({ userId: state.userId, customerId: state.customerId, role: state.role, sessionId: claims.sid });
    const swapped = await this.sessions.rotate(claims.sid, claims.jti, { refreshJti: pair.refreshJti, expiresAt: pair.refreshExpiresAt });
    if (!swapped) {
      await this.end(claims.sid, 'refresh_reuse');
      throw tokenNotValid();
    }
    return { access: pair.access, refresh: pair.refresh };
  }

  /** True when the token is a live access token, or the current refresh token of a live session. */
  async isValid(token: string): Promise<boolean> {
    const claims = this.tokens.verify(token);
    if (!claims) return false;
    if (claims.type === 'access') return (await this.activeState(claims.sid)) !== null;
    const session = await this.sessions.findById(claims.sid);
    return (
      session !== null && session.revokedAt === null && session.refreshJti === claims.jti && (await this.activeState(claims.sid)) !== null
    );
  }

  /** The session of an access token if it may still be used, from the cache when possible. */
  async activeState(sessionId: string): Promise<SessionState | null> {
    const state = await this.cache.get(`session:${sessionId}`, () => this.loadState(sessionId));
    return state && state.usable && state.expiresAtMs > this.clock.nowMs() ? state : null;
  }

  /** Ends a session: its refresh token and every access token it issued stop working. */
  async end(sessionId: string, reason: 'logout' | 'refresh_reuse'): Promise<void> {
    await this.transactions.run(async (transaction) => {
      await this.sessions.revoke(sessionId, reason, transaction);
      await publishInvalidation(transaction, `session:${sessionId}`);
    });
    this.cache.invalidate(`session:${sessionId}`);
  }

  private async loadState(sessionId: string): Promise<SessionState | null> {
    const row = await this.sessions.findWithUser(sessionId);
    if (!row) return null;
    return {
      userId: row.userId,
      customerId: row.customerId,
      role: row.role,
      usable: row.isActive && row.revokedAt === null,
      expiresAtMs: row.expiresAt.getTime(),
    };
  }
}
