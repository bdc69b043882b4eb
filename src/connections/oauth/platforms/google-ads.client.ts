import type { GoogleAdsConfig } from '../../../config/app-config.js';
import {
  type AdAccount,
  type AdPlatformClient,
  expiryOf,
  type GrantedTokens,
  type GrantRevocation,
  PlatformError,
  providerCall,
} from './ad-platform-client.js';
import { objectOf } from '../../../common/http/provider-call.js';
import { ADWORDS_SCOPE, GOOGLE_ADS_SCOPES } from '../../connection-readiness.js';

/** At most this many accounts are named one by one after listAccessibleCustomers; the rest keep a generated name. */
const NAMED_ACCOUNTS = 50;

/**
 * Google Ads: OAuth 2 authorization code with PKCE and offline access at Google, then the Google
 * Ads REST API: `customers:listAccessibleCustomers` (the accounts the grant reaches) and one
 * `googleAds:search` per account for its descriptive name. Every request carries the
 * `developer-token` header. https://developers.google.com/google-ads/api/rest/overview
 *
 * The grant asks for `adwords` and `datamanager` (SPEC 10.3) with incremental authorization
 * (`include_granted_scopes=true`), and the token answer's `scope` says what was granted: Google's
 * consent screen lets a person untick a scope, so `adwords` alone still makes a connection, one
 * that reports `scope_missing` until it is reconnected with both.
 * https://developers.google.com/identity/protocols/oauth2/web-server#creatingclient
 * https://developers.google.com/identity/protocols/oauth2/web-server#incrementalAuth
 */
export class GoogleAdsClient implements AdPlatformClient {
  readonly platform = 'google_ads';
  readonly label = 'Google Ads';

  constructor(
    private readonly settings: GoogleAdsConfig,
    private readonly timeoutMs: number,
    private readonly now: () => number,
  ) {}

  authorizationUrl(request: { state: string; redirectUri: string; codeChallenge: string }): URL {
    const url = new URL(this.settings.authorizationUrl);
    url.search = new URLSearchParams({
      client_id: this.settings.clientId,
      redirect_uri: request.redirectUri,
      response_type: 'code',
      scope: GOOGLE_ADS_SCOPES.join(' '),
      // The new grant also covers what this person granted the app before, so a reconnect never
      // narrows a connection that other scopes of the same app already reached.
      include_granted_scopes: 'true',
      // A refresh token, and a consent screen every time so Google issues a new one.
      access_type: 'offline',
      prompt: 'consent',
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url;
  }

  async exchangeCode(request: { code: string; redirectUri: string; codeVerifier: string }): Promise<GrantedTokens> {
    const tokens = await this.tokenRequest(
      {
        grant_type: 'authorization_code',
        code: request.code,
        redirect_uri: request.redirectUri,
        code_verifier: request.codeVerifier,
      },
      'invalid_code',
    );
    // The consent screen lets users untick scopes: a grant without adwords cannot be a connection.
    if (!tokens.scopes.includes(ADWORDS_SCOPE)) throw new PlatformError('scope_missing', 'The Google Ads scope was not granted.');
    if (tokens.refreshToken === null) throw new PlatformError('provider_error', 'Google gave no refresh token.');
    return tokens;
  }

  async refresh(stored: { accessToken: string | null; refreshToken: string | null }): Promise<GrantedTokens> {
    if (stored.refreshToken === null) throw new PlatformError('invalid_grant', 'No refresh token is stored.');
    const tokens = await this.tokenRequest({ grant_type: 'refresh_token', refresh_token: stored.refreshToken }, 'invalid_grant');
    // Google keeps the refresh token unless it rotates it.
    return { ...tokens, refreshToken: tokens.refreshToken ?? stored.refreshToken };
  }

  async listAccounts(accessToken: string): Promise<AdAccount[]> {
    const { status, body } = await providerCall(
      new URL(`${this.settings.apiUrl}/${this.settings.apiVersion}/customers:listAccessibleCustomers`),
      { headers: this.apiHeaders(accessToken) },
      this.timeoutMs,
      this.label,
    );
    if (status !== 200) throw this.apiError(status, body);
    const names = objectOf(body).resourceNames;
    const ids = (Array.isArray(names) ? names : [])
      .map((name) => (typeof name === 'string' ? /^customers\/(\d{1,20})$/.exec(name)?.[1] : undefined))
      .filter((id): id is string => id !== undefined);
    const accounts: AdAccount[] = [];
    for (const [index, id] of ids.entries()) {
      const name = index < NAMED_ACCOUNTS ? await this.descriptiveName(accessToken, id) : undefined;
      accounts.push({ externalAccountId: id, name: name ?? `Google Ads ${id.replace(/^(\d{3})(\d{3})(\d+)$/, '$1-$2-$3')}` });
    }
    return accounts;
  }

  /** The account's descriptive name, or undefined when it has none or cannot be read (a manager-only link). */
  private async descriptiveName(accessToken: string, customerId: string): Promise<string | undefined> {
    const { status, body } = await providerCall(
      new URL(`${this.settings.apiUrl}/${this.settings.apiVersion}/customers/${customerId}/googleAds:search`),
      {
        method: 'POST',
        headers: { ...this.apiHeaders(accessToken), 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'SELECT customer.id, customer.descriptive_name FROM customer' }),
      },
      this.timeoutMs,
      this.label,
    );
    if (status !== 200) return undefined;
    const results = objectOf(body).results;
    const name = Array.isArray(results) ? objectOf(objectOf(results[0]).customer).descriptiveName : undefined;
    return typeof name === 'string' && name.trim() !== '' ? name.trim().slice(0, 255) : undefined;
  }

  private apiHeaders(accessToken: string): Record<string, string> {
    return { authorization: `Bearer ${accessToken}`, 'developer-token': this.settings.developerToken };
  }

  private apiError(status: number, body: unknown): PlatformError {
    if (status === 401) return new PlatformError('invalid_grant', 'Google Ads refused the access token.');
    const reason = objectOf(objectOf(body).error).status;
    return new PlatformError(
      'provider_error',
      `Google Ads answered ${status}${typeof reason === 'string' ? ` ${reason.slice(0, 64)}` : ''}.`,
    );
  }

  /** POST to Google's token endpoint; an OAuth `invalid_grant` (or other 4xx) is `refused`. */
  private async tokenRequest(parameters: Record<string, string>, refused: 'invalid_code' | 'invalid_grant'): Promise<GrantedTokens> {
    const { status, body } = await providerCall(
      new URL(this.settings.tokenUrl),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          ...parameters,
          client_id: this.settings.clientId,
          client_secret: this.settings.clientSecret,
        }).toString(),
      },
      this.timeoutMs,
      this.label,
    );
    const answer = objectOf(body);
    if (status !== 200) {
      const error = typeof answer.error === 'string' ? answer.error.slice(0, 64) : `HTTP ${status}`;
      // Only invalid_grant speaks about the code or grant itself; invalid_client (a rotated secret),
      // unauthorized_client or a 429 are ours or passing, and must not cost anyone their connection.
      if (answer.error !== 'invalid_grant')
        throw new PlatformError('provider_error', `Google's token endpoint answered ${status} (${error}).`);
      throw new PlatformError(
        refused,
        `Google refused the ${refused === 'invalid_code' ? 'authorization code' : 'refresh token'} (${error}).`,
      );
    }
    if (typeof answer.access_token !== 'string' || answer.access_token === '')
      throw new PlatformError('provider_error', 'Google gave no access token.');
    return {
      accessToken: answer.access_token,
      refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? answer.refresh_token : null,
      expiresAt: expiryOf(answer.expires_in, this.now()),
      scopes: typeof answer.scope === 'string' ? answer.scope.split(' ').filter((scope) => scope !== '') : [],
    };
  }
}

/**
 * Revoking the refresh token also kills the access tokens minted from it; an access token alone
 * revokes the grant too. https://developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke
 */
export const revokeGoogleAdsGrant: GrantRevocation = (tokens, decrypt, config) => {
  const stored = tokens.refreshToken ?? tokens.accessToken;
  if (!stored) return undefined;
  return {
    url: new URL(config.googleOauthRevokeUrl),
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: decrypt(stored) }).toString(),
    },
  };
};
