import * as oidc from 'openid-client';
import { ApiError } from '../../common/errors/api-error.js';
import type { GoogleLoginConfig } from '../../config/app-config.js';
import {
  type AuthorizationRequest,
  type CodeExchange,
  codeRefused,
  isNetworkFailure,
  type ProviderIdentity,
  providerUnavailable,
  type SocialProvider,
  verificationFailed,
} from './social-provider.js';

/**
 * Google as an OpenID Connect provider, through openid-client: discovery from the configured
 * issuer, PKCE S256, a nonce, and the ID token's signature checked against the issuer's keys
 * (openid-client 6 checks `iss`, `aud`, `exp` and the nonce, but the signature only with
 * enableNonRepudiationChecks). A plain-http issuer is allowed only outside production (config).
 */
export class GoogleOidcProvider implements SocialProvider {
  readonly name = 'google-oauth2';
  readonly label = 'Google';
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(
    private readonly settings: GoogleLoginConfig,
    private readonly timeoutMs: number,
  ) {}

  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    return oidc.buildAuthorizationUrl(await this.discovered(), {
      redirect_uri: request.redirectUri,
      scope: 'openid email',
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  async identify(exchange: CodeExchange): Promise<ProviderIdentity> {
    const configuration = await this.discovered();
    const issuer = configuration.serverMetadata().issuer;
    if (exchange.iss !== undefined && exchange.iss !== issuer)
      throw ApiError.field('iss', `This is not Google's issuer; expected "${issuer}".`);
    // openid-client reads the authorization response from the callback URL. The state row has
    // already bound this request to Google, so a missing `iss` is Google's (RFC 9207).
    const callback = new URL(exchange.redirectUri);
    callback.searchParams.set('code', exchange.code);
    callback.searchParams.set('state', exchange.state);
    callback.searchParams.set('iss', issuer);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: exchange.codeVerifier,
        expectedState: exchange.state,
        expectedNonce: exchange.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.translate(error);
    }
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string') throw verificationFailed(this.label, 'no ID token subject');
    return {
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : null,
      emailVerified: claims.email_verified === true,
    };
  }

  trustsEmail(identity: ProviderIdentity): boolean {
    return identity.emailVerified;
  }

  /** Google said the email is not verified: the person can fix that at Google, so say so. */
  untrustedEmailRefusal(identity: ProviderIdentity): ApiError | undefined {
    if (identity.email === null) return undefined;
    return new ApiError(401, 'authentication_failed', 'Google has not verified the email address of this account.', undefined, {
      'www-authenticate': 'Bearer realm="api"',
    });
  }

  /** The issuer's metadata, fetched once; a failed discovery is retried on the next request. */
  private discovered(): Promise<oidc.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw isNetworkFailure(error) || error instanceof oidc.ClientError ? providerUnavailable(this.label) : error;
    });
    return this.configuration;
  }

  private async discover(): Promise<oidc.Configuration> {
    const issuer = new URL(this.settings.issuer);
    const execute = [oidc.enableNonRepudiationChecks];
    if (issuer.protocol === 'http:') execute.push(oidc.allowInsecureRequests);
    return oidc.discovery(issuer, this.settings.clientId, undefined, oidc.ClientSecretPost(this.settings.clientSecret), {
      execute,
      timeout: Math.ceil(this.timeoutMs / 1000),
    });
  }

  /** openid-client's errors → 400 (code refused), 401 (answer failed verification) or 503 (Google unreachable). */
  private translate(error: unknown): unknown {
    if (error instanceof oidc.ResponseBodyError) {
      return error.status >= 500 ? providerUnavailable(this.label) : codeRefused(this.label, error.error);
    }
    if (error instanceof oidc.AuthorizationResponseError) return codeRefused(this.label, error.error);
    if (error instanceof oidc.WWWAuthenticateChallengeError) return codeRefused(this.label, 'invalid_client');
    if (isNetworkFailure(error)) return providerUnavailable(this.label);
    if (error instanceof oidc.ClientError) {
      const status = (error.cause as { status?: unknown } | undefined)?.status;
      if (error.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' && typeof status === 'number' && status >= 500)
        return providerUnavailable(this.label);
      // openid-client wraps a time-out or an abort (and a failed fetch) in a ClientError of its own.
      if (error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT' || isNetworkFailure(error.cause))
        return providerUnavailable(this.label);
      return verificationFailed(this.label, error.message);
    }
    return error;
  }
}
