import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { Clock } from '../../common/time/clock.js';
import { Transactions, type Transaction } from '../../common/tenancy/transactions.js';
import { LOGGER } from '../../logging/logger.token.js';
import type { Connection, ConnectionStatus, Platform } from '../connection.entity.js';
import { ConnectionRemovalHandlers } from '../connection-removal.js';
import { ConnectionsRepository } from '../connections.repository.js';
import { TokenCipher } from '../token-cipher.js';
import { isUniqueViolation } from '../../common/errors/database-errors.js';
import { WebhookEvents } from '../../webhooks/webhook-events.js';
import { reauthorizeRequired } from '../connection-readiness.js';
import { toConnectionDto } from '../connection.mapper.js';
import { AdPlatformClients } from './ad-platform-clients.js';
import { type AdAccount, type GrantedTokens, PlatformError } from './platforms/ad-platform-client.js';

/** A Google access token this close to expiry is refreshed before it is handed out. */
const REFRESH_MARGIN_MS = 60_000;

export type RefreshOutcome = 'refreshed' | 'lost' | 'failed';

/**
 * The life of a connection's OAuth grant (SPEC section 6): storing it on one connection per
 * account, refreshing it, and turning the connection `expired` or `revoked` (with its active
 * signals paused, in the same transaction) when the provider says the grant is gone. Everything
 * here runs inside the connection's workspace. Plaintext tokens exist only in memory, between the
 * provider and TokenCipher; they never reach a log or an error.
 */
@Injectable()
export class ConnectionGrants {
  constructor(
    private readonly clients: AdPlatformClients,
    private readonly connections: ConnectionsRepository,
    private readonly transactions: Transactions,
    private readonly cipher: TokenCipher,
    private readonly removal: ConnectionRemovalHandlers,
    private readonly clock: Clock,
    private readonly webhookEvents: WebhookEvents,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * One connection per account, created or refreshed in place (same id, back to `active`, the
   * user's own account name kept), all in one transaction: a failure leaves none half-written.
   */
  async connect(platform: Platform, accounts: AdAccount[], tokens: GrantedTokens, userId: number): Promise<Connection[]> {
    // What a grant sets on each of its connections, new or refreshed in place.
    const grant = {
      status: 'active',
      statusReason: null,
      scopes: tokens.scopes,
      connectedBy: userId,
      tokenExpiresAt: tokens.expiresAt,
      lastRefreshedAt: this.clock.now(),
    } satisfies Partial<Connection>;
    const ciphertexts = {
      accessToken: this.cipher.encrypt(tokens.accessToken),
      refreshToken: tokens.refreshToken === null ? null : this.cipher.encrypt(tokens.refreshToken),
    };
    const connectAll = () =>
      this.transactions.run(async (transaction) => {
        const connected: Connection[] = [];
        for (const account of accounts) {
          const existing = await this.connections.findByAccountForUpdate(platform, account.externalAccountId, transaction);
          if (existing) {
            await this.connections.save(Object.assign(existing, grant), transaction);
            await this.connections.storeTokens(existing.id, ciphertexts, transaction);
            connected.push(existing);
          } else {
            const values = { platform, externalAccountId: account.externalAccountId, accountName: account.name, ...grant };
            connected.push(await this.connections.insertWithTokens(values, ciphertexts, transaction));
          }
        }
        return connected;
      });
    try {
      return await connectAll();
    } catch (error) {
      // Two callbacks for the same new account at once: the loser's insert meets the winner's row,
      // which the second try finds and refreshes in place.
      if (!isUniqueViolation(error, 'connections_customer_account_key')) throw error;
      return connectAll();
    }
  }

  /**
   * The access token to call the platform with, refreshed first when it runs out within a minute
   * (Google's last an hour). Throws a PlatformError when the connection cannot be used: not
   * active, or its grant gone (then the connection is marked and its active signals paused).
   */
  async accessTokenFor(connectionId: number): Promise<string> {
    const connection = await this.connections.getById(connectionId);
    if (connection.status !== 'active') throw new PlatformError('invalid_grant', `The connection is ${connection.status}; reconnect it.`);
    const stored = await this.connections.storedTokens(connectionId);
    const dueAt = connection.tokenExpiresAt?.getTime() ?? Infinity;
    if (stored?.accessToken && dueAt - REFRESH_MARGIN_MS > this.clock.nowMs()) return this.cipher.decrypt(stored.accessToken);
    const outcome = await this.transactions.run((transaction) => this.refresh(connectionId, transaction));
    if (outcome.token === undefined) throw outcome.error ?? new PlatformError('invalid_grant', 'The connection has no usable token.');
    return outcome.token;
  }

  /**
   * A platform refused the connection's token on use (SPEC 10.3: HTTP 401, Meta code 190): the
   * grant is gone, so the connection turns `revoked` when the platform said it was revoked, else
   * `expired`, exactly as when a refresh finds it gone.
   */
  async lostOnUse(connectionId: number, revoked: boolean, reason: string): Promise<void> {
    await this.transactions.run(async (transaction) => {
      const connection = await this.connections.getById(connectionId, { transaction, lock: true });
      if (connection.status !== 'active') return;
      await this.suspend(connection, revoked ? 'revoked' : 'expired', reason, transaction);
      this.logger.warn(
        { connection_id: connection.id, customer: connection.customerId, platform: connection.platform, reason },
        'connection grant lost',
      );
    });
  }

  /** Refreshes the grant now, in the caller's transaction (the sweep holds the row's lock). */
  async refreshInTransaction(connectionId: number, transaction: Transaction): Promise<RefreshOutcome> {
    const outcome = await this.refresh(connectionId, transaction);
    if (outcome.token !== undefined) return 'refreshed';
    return outcome.error?.grantLost ? 'lost' : 'failed';
  }

  private async refresh(connectionId: number, transaction: Transaction): Promise<{ token?: string; error?: PlatformError }> {
    const connection = await this.connections.getById(connectionId, { transaction, lock: true });
    const client = this.clients.get(connection.platform);
    const stored = await this.connections.storedTokens(connectionId, transaction);
    const context = { connection_id: connection.id, customer: connection.customerId, platform: connection.platform };
    if (!client || !stored || connection.status !== 'active') {
      return { error: new PlatformError('provider_error', 'This connection cannot be refreshed here.') };
    }
    let fresh: GrantedTokens;
    try {
      fresh = await client.refresh({
        accessToken: stored.accessToken && this.cipher.decrypt(stored.accessToken),
        refreshToken: stored.refreshToken && this.cipher.decrypt(stored.refreshToken),
      });
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      if (error.grantLost) {
        await this.suspend(connection, error.failure === 'access_revoked' ? 'revoked' : 'expired', error.failure, transaction);
        this.logger.warn({ ...context, reason: error.failure }, 'connection grant lost');
      } else {
        this.logger.warn({ ...context, reason: error.failure }, 'connection token refresh failed');
      }
      return { error };
    }
    const wasReady = !reauthorizeRequired(connection);
    connection.tokenExpiresAt = fresh.expiresAt;
    connection.lastRefreshedAt = this.clock.now();
    if (fresh.scopes.length > 0) connection.scopes = fresh.scopes;
    const saved = await this.connections.save(connection, transaction);
    // A refresh that comes back with fewer scopes (a permission withdrawn at the provider) needs a reconnect too.
    if (wasReady && reauthorizeRequired(saved))
      await this.webhookEvents.emit(transaction, 'connection.reauthorization_required', toConnectionDto(saved));
    await this.connections.storeTokens(
      connection.id,
      {
        accessToken: this.cipher.encrypt(fresh.accessToken),
        refreshToken: fresh.refreshToken === null ? undefined : this.cipher.encrypt(fresh.refreshToken),
      },
      transaction,
    );
    this.logger.info(context, 'connection token refreshed');
    return { token: fresh.accessToken };
  }

  /** The grant is gone: the connection says why and needs a reconnect, its active signals pause, and webhooks are told. */
  private async suspend(
    connection: Connection,
    status: Extract<ConnectionStatus, 'expired' | 'revoked'>,
    reason: string,
    transaction: Transaction,
  ): Promise<void> {
    connection.status = status;
    connection.statusReason = reason;
    const saved = await this.connections.save(connection, transaction);
    await this.removal.suspended(connection.id, transaction);
    // SPEC 10.5: integrators hear of it in the same transaction (the sweep's and a token refresh's).
    await this.webhookEvents.emit(transaction, 'connection.reauthorization_required', toConnectionDto(saved));
  }
}
