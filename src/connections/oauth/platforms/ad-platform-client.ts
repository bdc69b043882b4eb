import { providerCall as callProvider, ProviderUnreachableError } from '../../../common/http/provider-call.js';
import type { AppConfig } from '../../../config/app-config.js';
import type { Platform } from '../../connection.entity.js';
import type { StoredTokens } from '../../connections.repository.js';
import type { EncryptedToken } from '../../token-cipher.js';

/** What an OAuth grant gave: plaintext only in memory, on its way to TokenCipher. */
export interface GrantedTokens {
  accessToken: string;
  /** Google's refresh token; Meta has none (its long-lived access token is the grant). */
  refreshToken: string | null;
  expiresAt: Date | null;
  scopes: string[];
}

export interface AdAccount {
  externalAccountId: string;
  name: string;
}

/**
 * Why a provider call did not give what was asked, as the flow's redirect and a connection's
 * `status_reason` name it. `invalid_grant`, `token_expired` and `access_revoked` mean the grant
 * is gone (the connection turns `expired` or `revoked`); the others are about one attempt.
 */
export type PlatformFailure =
  'invalid_code' | 'scope_missing' | 'provider_unavailable' | 'provider_error' | 'invalid_grant' | 'token_expired' | 'access_revoked';

/** A provider call failed; the message never holds a token, a secret or the provider's raw answer. */
export class PlatformError extends Error {
  constructor(
    readonly failure: PlatformFailure,
    detail: string,
  ) {
    super(detail);
    this.name = 'PlatformError';
  }

  /** The grant itself is gone: reconnecting is the only way back. */
  get grantLost(): boolean {
    return this.failure === 'invalid_grant' || this.failure === 'token_expired' || this.failure === 'access_revoked';
  }
}

/** One ad platform's OAuth and account listing (SPEC section 6). */
export interface AdPlatformClient {
  readonly platform: Platform;
  readonly label: string;
  authorizationUrl(request: { state: string; redirectUri: string; codeChallenge: string }): URL;
  exchangeCode(request: { code: string; redirectUri: string; codeVerifier: string }): Promise<GrantedTokens>;
  listAccounts(accessToken: string): Promise<AdAccount[]>;
  /** A new access token from the stored grant (Google: refresh token; Meta: the long-lived token). */
  refresh(stored: { accessToken: string | null; refreshToken: string | null }): Promise<GrantedTokens>;
}

/** The call that revokes a stored grant at its platform; it carries a plaintext token, so it never reaches a log. */
export interface RevocationRequest {
  url: URL;
  init: RequestInit;
}

/**
 * How a platform's stored grant is revoked when its connection is deleted, or undefined when no
 * token is stored. It needs none of the OAuth app's settings: a connection made while the app was
 * configured can still be revoked after the app is removed.
 */
export type GrantRevocation = (
  tokens: StoredTokens,
  decrypt: (token: EncryptedToken) => string,
  config: Pick<AppConfig, 'googleOauthRevokeUrl' | 'metaGraphUrl'>,
) => RevocationRequest | undefined;

/** The shared provider call (src/common/http/provider-call.ts), its unreachable provider as `provider_unavailable`. */
export async function providerCall(
  url: URL,
  init: RequestInit,
  timeoutMs: number,
  label: string,
): Promise<{ status: number; body: unknown }> {
  try {
    return await callProvider(url, init, timeoutMs, label);
  } catch (error) {
    if (error instanceof ProviderUnreachableError) throw new PlatformError('provider_unavailable', error.message);
    throw error;
  }
}

export const expiryOf = (expiresIn: unknown, now: number): Date | null =>
  typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now + expiresIn * 1000) : null;
