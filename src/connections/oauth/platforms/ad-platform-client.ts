import type { Platform } from '../../connection.entity.js';

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

/**
 * One call to a provider with a time limit and no redirects (a redirect would resend a token).
 * A network failure, a time-out or a 5xx is `provider_unavailable`; otherwise the status and the
 * parsed JSON body (undefined when it is not JSON) are returned for the caller to judge.
 */
export async function providerCall(
  url: URL,
  init: RequestInit,
  timeoutMs: number,
  label: string,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw new PlatformError('provider_unavailable', `${label} could not be reached.`);
  }
  if (response.status >= 500) {
    await response.body?.cancel();
    throw new PlatformError('provider_unavailable', `${label} answered ${response.status}.`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    // A body cut off by the time-out is the provider being slow; one that is not JSON is an answer.
    const name = (error as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new PlatformError('provider_unavailable', `${label} answered too slowly.`);
    body = undefined;
  }
  return { status: response.status, body };
}

export const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export const expiryOf = (expiresIn: unknown, now: number): Date | null =>
  typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now + expiresIn * 1000) : null;
