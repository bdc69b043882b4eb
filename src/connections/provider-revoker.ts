import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { LOGGER } from '../logging/logger.token.js';
import type { Connection } from './connection.entity.js';
import type { StoredTokens } from './connections.repository.js';
import { TokenCipher } from './token-cipher.js';

export type RevocationOutcome = 'revoked' | 'skipped' | 'failed';

interface RevocationRequest {
  url: URL;
  init: RequestInit;
}

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
    let request: RevocationRequest | undefined;
    try {
      request = this.requestFor(connection.platform, tokens);
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
      await response.body?.cancel();
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

  private requestFor(platform: Connection['platform'], tokens: StoredTokens): RevocationRequest | undefined {
    switch (platform) {
      case 'google_ads': {
        // Revoking the refresh token also kills the access tokens minted from it; an access token
        // alone revokes the grant too. https://developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke
        const stored = tokens.refreshToken ?? tokens.accessToken;
        if (!stored) return undefined;
        return {
          url: new URL(this.config.googleOauthRevokeUrl),
          init: {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ token: this.cipher.decrypt(stored) }).toString(),
          },
        };
      }
      case 'meta_ads': {
        // Meta grants have no refresh token: the long-lived user access token is the grant.
        // https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke
        if (!tokens.accessToken) return undefined;
        const url = new URL(`${this.config.metaGraphUrl}/me/permissions`);
        url.searchParams.set('access_token', this.cipher.decrypt(tokens.accessToken));
        return { url, init: { method: 'DELETE' } };
      }
    }
  }
}
