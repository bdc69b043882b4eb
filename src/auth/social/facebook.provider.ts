import { appSecretProof, graphErrorReason } from '../../common/http/meta-graph.js';
import { providerCall, ProviderUnreachableError } from '../../common/http/provider-call.js';
import type { FacebookLoginConfig } from '../../config/app-config.js';
import {
  type AuthorizationRequest,
  type CodeExchange,
  codeRefused,
  type ProviderIdentity,
  providerUnavailable,
  type SocialProvider,
  verificationFailed,
} from './social-provider.js';

/**
 * Facebook Login as plain OAuth 2 against the Graph API (no OpenID Connect here): the login dialog,
 * `oauth/access_token` for the code (with the PKCE verifier), then `me?fields=id,email` signed with
 * `appsecret_proof`. Facebook says nothing about whether the email was verified, so by default its
 * email never signs anyone in (FACEBOOK_TRUST_EMAIL; see docs/social-login.md).
 * https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 */
export class FacebookProvider implements SocialProvider {
  readonly name = 'facebook';
  readonly label = 'Facebook';

  constructor(
    private readonly settings: FacebookLoginConfig,
    private readonly timeoutMs: number,
  ) {}

  authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    const url = new URL(`${this.settings.dialogUrl}/${this.settings.graphVersion}/dialog/oauth`);
    url.search = new URLSearchParams({
      client_id: this.settings.appId,
      redirect_uri: request.redirectUri,
      state: request.state,
      response_type: 'code',
      scope: 'email',
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return Promise.resolve(url);
  }

  async identify(exchange: CodeExchange): Promise<ProviderIdentity> {
    const token = await this.graph('oauth/access_token', {
      client_id: this.settings.appId,
      client_secret: this.settings.appSecret,
      redirect_uri: exchange.redirectUri,
      code: exchange.code,
      code_verifier: exchange.codeVerifier,
    });
    if (!token.ok) throw codeRefused(this.label, token.reason);
    const accessToken = token.body.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') throw verificationFailed(this.label, 'no access token');

    const me = await this.graph('me', {
      fields: 'id,email',
      access_token: accessToken,
      appsecret_proof: appSecretProof(this.settings.appSecret, accessToken),
    });
    if (!me.ok) throw verificationFailed(this.label, `the profile request was refused (${me.reason})`);
    const { id, email } = me.body;
    if (typeof id !== 'string' || !/^\d{1,64}$/.test(id)) throw verificationFailed(this.label, 'no user id');
    return { subject: id, email: typeof email === 'string' && email !== '' ? email : null, emailVerified: false };
  }

  trustsEmail(identity: ProviderIdentity): boolean {
    return this.settings.trustEmail && identity.email !== null;
  }

  /**
   * One Graph GET. Its URL carries the app secret or a token, so neither the URL nor the provider's
   * raw answer reaches a log or an error; only Graph's error type and code do.
   */
  private async graph(
    path: string,
    parameters: Record<string, string>,
  ): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; reason: string }> {
    const url = new URL(`${this.settings.graphUrl}/${this.settings.graphVersion}/${path}`);
    url.search = new URLSearchParams(parameters).toString();
    let answer: { status: number; body: unknown };
    try {
      answer = await providerCall(url, {}, this.timeoutMs, this.label);
    } catch (error) {
      throw error instanceof ProviderUnreachableError ? providerUnavailable(this.label) : error;
    }
    const { status, body } = answer;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw verificationFailed(this.label, 'an answer that is not JSON');
    return status >= 200 && status < 300
      ? { ok: true, body: body as Record<string, unknown> }
      : { ok: false, reason: graphErrorReason(body) };
  }
}
