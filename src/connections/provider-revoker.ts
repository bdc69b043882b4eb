import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { discardBody } from '../common/http/discard-body.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { LOGGER } from '../logging/logger.token.js';
import type { Connection } from './connection.entity.js';
import type { StoredTokens } from './connections.repository.js';
import { revocationOf } from './oauth/ad-platform-clients.js';
import type { RevocationRequest } from './oauth/platforms/ad-platform-client.js';
import { TokenCipher } from './token-cipher.js';

export type RevocationOutcome = 'revoked' | 'skipped' | 'failed';

/**
 * Revokes a connection's grant at its ad platform when the connection is deleted (SPEC section 3).
 * Best effort: it never throws, so a provider that is down or slow cannot block a deletion. Its log
 * lines name the connection and the reason only; the token, and the Graph URL (which carries the
 * token in its query), never reach a log.
 */
@Injectable()
export class ProviderRevoker {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cipher: TokenCipher,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async revoke(connection: Pick<Connection, 'id' | 'customerId' | 'platform'>, tokens: StoredTokens): Promise<RevocationOutcome> {
    const context = { connection_id: connection.id, customer: connection.customerId, platform: connection.platform };
    const revocation = revocationOf(connection.platform);
    let request: RevocationRequest | undefined;
    try {
      request = revocation(tokens, (token) => this.cipher.decrypt(token), this.config);
    } catch {
      // An undecryptable token (its key was retired, or the row is corrupt) cannot be revoked by us.
      this.logger.warn({ ...context, reason: 'token_not_decryptable' }, 'provider revocation failed');
      return 'failed';
    }
    if (!request) {
      this.logger.info({ ...context, reason: 'no_stored_token' }, 'provider revocation skipped');
      return 'skipped';
    }
    try {
      const response = await fetch(request.url, {
        ...request.init,
        // A redirect would resend the token to wherever it points; the endpoints never redirect.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.providerTimeoutMs),
      });
      await discardBody(response);
      if (response.ok) {
        this.logger.info(context, 'provider grant revoked');
        return 'revoked';
      }
      this.logger.warn({ ...context, reason: 'provider_error', provider_status: response.status }, 'provider revocation failed');
    } catch (error) {
      const reason = (error as { name?: unknown } | null)?.name === 'TimeoutError' ? 'timeout' : 'network_error';
      this.logger.warn({ ...context, reason }, 'provider revocation failed');
    }
    return 'failed';
  }
}
