import { appSecretProof, graphErrorReason } from '../../../common/http/meta-graph.js';
import type { MetaAdsConfig } from '../../../config/app-config.js';
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

export const META_SCOPES = ['ads_management', 'ads_read'] as const;

/** Pages of `me/adaccounts` read at most (100 accounts each). */
const ACCOUNT_PAGES = 10;

/**
 * Meta Ads: Facebook Login's dialog, the code exchanged for a short-lived user token and that for a
 * long-lived one (`fb_exchange_token`, about 60 days), `me/permissions` for what was granted, and
 * `me/adaccounts` for the accounts. Graph calls carry `appsecret_proof`. Graph's error 190 says
 * the token is dead: subcodes 458 and 460 mean the person removed the app or changed their
 * password (revoked), 463 that it expired. https://developers.facebook.com/docs/marketing-api/overview/authorization
 */
export class MetaAdsClient implements AdPlatformClient {
  readonly platform = 'meta_ads';
  readonly label = 'Meta Ads';

  constructor(
    private readonly settings: MetaAdsConfig,
    private readonly graphUrl: string,
    private readonly timeoutMs: number,
    private readonly now: () => number,
  ) {}

  authorizationUrl(request: { state: string; redirectUri: string; codeChallenge: string }): URL {
    const url = new URL(this.settings.dialogUrl);
    url.search = new URLSearchParams({
      client_id: this.settings.appId,
      redirect_uri: request.redirectUri,
      state: request.state,
      response_type: 'code',
      scope: META_SCOPES.join(','),
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url;
  }

  async exchangeCode(request: { code: string; redirectUri: string; codeVerifier: string }): Promise<GrantedTokens> {
    const short = await this.graph('oauth/access_token', {
      client_id: this.settings.appId,
      client_secret: this.settings.appSecret,
      redirect_uri: request.redirectUri,
      code: request.code,
      code_verifier: request.codeVerifier,
    });
    if (short.status !== 200)
      throw new PlatformError('invalid_code', `Meta refused the authorization code (${graphErrorReason(short.body)}).`);
    const tokens = await this.longLived(tokenOf(short.body));
    const scopes = await this.grantedScopes(tokens.accessToken);
    if (!META_SCOPES.every((scope) => scopes.includes(scope)))
      throw new PlatformError('scope_missing', `Meta Ads needs ${META_SCOPES.join(' and ')}; not all were granted.`);
    return { ...tokens, scopes };
  }

  /** A fresh long-lived token for the stored one, while it is still valid. */
  async refresh(stored: { accessToken: string | null; refreshToken: string | null }): Promise<GrantedTokens> {
    if (stored.accessToken === null) throw new PlatformError('invalid_grant', 'No access token is stored.');
    const tokens = await this.longLived(stored.accessToken);
    return { ...tokens, scopes: await this.grantedScopes(tokens.accessToken) };
  }

  async listAccounts(accessToken: string): Promise<AdAccount[]> {
    const accounts: AdAccount[] = [];
    let after: string | undefined;
    for (let page = 0; page < ACCOUNT_PAGES; page++) {
      const { status, body } = await this.graph('me/adaccounts', {
        fields: 'account_id,name,account_status',
        limit: '100',
        ...(after !== undefined && { after }),
        ...this.signed(accessToken),
      });
      if (status !== 200) throw graphFailure(body);
      const answer = objectOf(body);
      for (const item of Array.isArray(answer.data) ? answer.data : []) {
        const { account_id: id, name } = objectOf(item);
        if (typeof id !== 'string' || !/^\d{1,30}$/.test(id)) continue;
        accounts.push({
          externalAccountId: id,
          name: typeof name === 'string' && name.trim() !== '' ? name.trim().slice(0, 255) : `Meta Ads ${id}`,
        });
      }
      // Follow the cursor, not `paging.next`: that URL comes from the answer and is never fetched as such.
      const cursor = objectOf(objectOf(objectOf(answer.paging).cursors)).after;
      if (typeof objectOf(answer.paging).next !== 'string' || typeof cursor !== 'string') break;
      after = cursor;
    }
    return accounts;
  }

  private async longLived(shortLived: string): Promise<GrantedTokens> {
    const { status, body } = await this.graph('oauth/access_token', {
      grant_type: 'fb_exchange_token',
      client_id: this.settings.appId,
      client_secret: this.settings.appSecret,
      fb_exchange_token: shortLived,
    });
    if (status !== 200) throw graphFailure(body);
    return { accessToken: tokenOf(body), refreshToken: null, expiresAt: expiryOf(objectOf(body).expires_in, this.now()), scopes: [] };
  }

  private async grantedScopes(accessToken: string): Promise<string[]> {
    const { status, body } = await this.graph('me/permissions', this.signed(accessToken));
    if (status !== 200) throw graphFailure(body);
    const data = objectOf(body).data;
    return (Array.isArray(data) ? data : [])
      .map((item) => objectOf(item))
      .filter((item) => item.status === 'granted' && typeof item.permission === 'string')
      .map((item) => item.permission as string);
  }

  private signed(accessToken: string): Record<string, string> {
    return { access_token: accessToken, appsecret_proof: appSecretProof(this.settings.appSecret, accessToken) };
  }

  /** A Graph GET. Its URL holds the app secret or a token: it never reaches a log or an error. */
  private graph(path: string, parameters: Record<string, string>): Promise<{ status: number; body: unknown }> {
    const url = new URL(`${this.graphUrl}/${path}`);
    url.search = new URLSearchParams(parameters).toString();
    return providerCall(url, {}, this.timeoutMs, this.label);
  }
}

function tokenOf(body: unknown): string {
  const token = objectOf(body).access_token;
  if (typeof token !== 'string' || token === '') throw new PlatformError('provider_error', 'Meta gave no access token.');
  return token;
}

/**
 * Error 190 is a dead token: revoked (subcodes 458, 460), expired (463) or otherwise invalid.
 * Anything else (rate limits 4, 17, 32, 613; temporary errors) is not about the grant.
 */
function graphFailure(body: unknown): PlatformError {
  const error = objectOf(objectOf(body).error);
  if (error.code === 190) {
    if (error.error_subcode === 458 || error.error_subcode === 460)
      return new PlatformError('access_revoked', 'The person removed the app or changed their password.');
    if (error.error_subcode === 463) return new PlatformError('token_expired', 'The Meta token has expired.');
    return new PlatformError('invalid_grant', `Meta refused the token (${graphErrorReason(body)}).`);
  }
  return new PlatformError('provider_error', `Meta answered with an error (${graphErrorReason(body)}).`);
}

/**
 * Meta grants have no refresh token: the long-lived user access token is the grant.
 * https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke
 */
export const revokeMetaAdsGrant: GrantRevocation = (tokens, decrypt, config) => {
  if (!tokens.accessToken) return undefined;
  const url = new URL(`${config.metaGraphUrl}/me/permissions`);
  url.searchParams.set('access_token', decrypt(tokens.accessToken));
  return { url, init: { method: 'DELETE' } };
};
