import { Inject, Injectable } from '@nestjs/common';
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier } from 'openid-client';
import { randomSecret, sha256 } from '../../common/crypto/secret-hash.js';
import { ApiError } from '../../common/errors/api-error.js';
import { RATE_LIMITER } from '../../common/rate-limit/rate-limiter.token.js';
import type { RateLimiter } from '../../common/rate-limit/rate-limiter.js';
import { Clock } from '../../common/time/clock.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import { UsersService } from '../../users/users.service.js';
import type { Identity } from '../../common/access/identity.js';
import { loginFailuresPerIpKey, LOGIN_FAILED, LOGINS_THROTTLED } from '../login.service.js';
import { SessionsService } from '../sessions.service.js';
import type { TokenPair } from '../tokens/token.service.js';
import { SocialLoginRepository } from './social-login.repository.js';
import type { SocialProvider } from './social-provider.js';
import { SocialProviders } from './social-providers.js';

/** How long a started login may take to come back (SPEC section 2: short-lived state). */
export const STATE_LIFETIME_MS = 10 * 60 * 1000;

/** What the POST carries, from a JSON body, a form body or the query string. */
export interface SocialCallback {
  code?: string;
  state?: string;
  iss?: string;
  redirect_uri?: string;
  error?: string;
  error_description?: string;
}

export interface SocialLoginResult extends TokenPair {
  user: { id: number; email: string };
}

const stateError = (message: string) => ApiError.field('state', message);

/**
 * Sign-in with Google or Facebook (SPEC section 2, djoser-compatible). A login starts with an
 * authorization URL whose state, PKCE verifier, nonce and redirect URI are kept server-side for ten
 * minutes, and ends with one POST that spends that state, has the provider vouch for the person
 * and maps them to an existing active user; nobody and no workspace is ever created here. The
 * tokens issued are an ordinary session, so refresh, logout and deactivation work as for passwords.
 */
@Injectable()
export class SocialLoginService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: SocialLoginRepository,
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly clock: Clock,
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    private readonly providers: SocialProviders,
  ) {}

  /**
   * GET /auth/o/{provider}/: where to send the browser. With `linkFor` (the GET carried a valid
   * access token) the flow links an account to that user, and only that user's POST can finish it:
   * else a code and state obtained with someone else's provider account could be slipped to a
   * signed-in victim and linked to them.
   */
  async start(providerName: string, redirectUri: string | undefined, linkFor?: Identity): Promise<{ authorization_url: string }> {
    const provider = this.provider(providerName);
    const redirect = this.allowedRedirectUri(redirectUri);
    const state = randomSecret();
    const codeVerifier = randomPKCECodeVerifier();
    const nonce = randomNonce();
    const url = await provider.authorizationUrl({
      redirectUri: redirect,
      state,
      nonce,
      codeChallenge: await calculatePKCECodeChallenge(codeVerifier),
    });
    const now = this.clock.now();
    await this.repository.insertState(
      {
        stateHash: sha256(state),
        provider: provider.name,
        redirectUri: redirect,
        codeVerifier,
        nonce,
        userId: linkFor?.kind === 'user' ? linkFor.userId : null,
        expiresAt: new Date(now.getTime() + STATE_LIFETIME_MS),
      },
      now,
    );
    return { authorization_url: url.href };
  }

  /**
   * POST /auth/o/{provider}/: spends the state, then signs in the user the identity maps to, or,
   * with `linkTo` (the caller's valid access token), links the identity to that user. Every 400
   * and 401 counts as a failed login of the client IP, as password logins do.
   */
  async finish(providerName: string, callback: SocialCallback, clientIp: string, linkTo?: Identity): Promise<SocialLoginResult> {
    const provider = this.provider(providerName);
    const window = this.config.loginFailureWindowSeconds;
    const ipKey = loginFailuresPerIpKey(clientIp);
    const count = await this.limiter.peek(ipKey, window);
    if (count.count >= this.config.loginFailuresPerIp) throw LOGINS_THROTTLED(count.resetSeconds);
    try {
      return await this.signIn(provider, callback, linkTo);
    } catch (error) {
      if (error instanceof ApiError && (error.statusCode === 400 || error.statusCode === 401)) await this.limiter.hit(ipKey, window);
      throw error;
    }
  }

  private async signIn(provider: SocialProvider, callback: SocialCallback, linkTo: Identity | undefined): Promise<SocialLoginResult> {
    if (!callback.state) throw stateError('This field is required.');
    // The state is spent first, whatever follows: a second try with it is a replay.
    const pending = await this.repository.takeState(sha256(callback.state));
    if (!pending) throw stateError('Unknown or already used state; start the login again.');
    if (pending.expiresAt.getTime() <= this.clock.nowMs()) throw stateError('This state has expired; start the login again.');
    if (pending.provider !== provider.name) throw stateError(`This state was issued for another provider, not ${provider.label}.`);
    if (callback.redirect_uri !== undefined && normalizedUrl(callback.redirect_uri) !== pending.redirectUri)
      throw stateError('This state was issued for another redirect_uri.');
    const linkingUser = linkTo?.kind === 'user' ? linkTo.userId : null;
    if (pending.userId !== linkingUser) {
      throw stateError(
        pending.userId === null
          ? 'This state was issued for a login, not for linking; start the link with your access token on the GET.'
          : 'This state was issued to link an account to a signed-in user; finish it with that user’s access token.',
      );
    }
    if (callback.error !== undefined) {
      const reason = callback.error_description ? `${callback.error}: ${callback.error_description}` : callback.error;
      throw ApiError.field('code', `${provider.label} did not grant access (${reason.slice(0, 200)}).`);
    }
    if (!callback.code) throw ApiError.field('code', 'This field is required.');

    const identity = await provider.identify({
      code: callback.code,
      state: callback.state,
      iss: callback.iss,
      redirectUri: pending.redirectUri,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
    });
    const now = this.clock.now();

    if (linkTo?.kind === 'user') {
      const owner = await this.repository.link(provider.name, identity.subject, linkTo.userId, identity.email, now);
      if (owner !== linkTo.userId) throw ApiError.conflict(`This ${provider.label} account is already linked to another user.`);
      return this.startSession(owner);
    }

    let userId = await this.repository.userOf(provider.name, identity.subject, now);
    if (userId === null) {
      if (!provider.trustsEmail(identity)) throw provider.untrustedEmailRefusal?.(identity) ?? LOGIN_FAILED();
      const user = identity.email === null ? null : await this.users.findByEmail(identity.email);
      // An inactive user is not linked: the same answer as for an unknown email.
      if (!user || !user.isActive) throw LOGIN_FAILED();
      userId = await this.repository.link(provider.name, identity.subject, user.id, identity.email, now);
    }
    return this.startSession(userId);
  }

  private async startSession(userId: number): Promise<SocialLoginResult> {
    const user = await this.users.findById(userId);
    if (!user || !user.isActive) throw LOGIN_FAILED();
    const pair = await this.sessions.start(user);
    return { access: pair.access, refresh: pair.refresh, user: { id: user.id, email: user.email } };
  }

  /** 404 unless `name` is a configured provider. */
  assertConfigured(name: string): void {
    this.provider(name);
  }

  private provider(name: string): SocialProvider {
    const provider = this.providers.get(name);
    if (!provider) throw ApiError.notFound(`No social login provider "${name.slice(0, 64)}" is configured.`);
    return provider;
  }

  private allowedRedirectUri(value: string | undefined): string {
    if (value === undefined || value === '') throw ApiError.field('redirect_uri', 'This field is required.');
    const normalized = normalizedUrl(value);
    if (normalized === undefined || !this.config.socialLogin.allowedRedirectUris.includes(normalized))
      throw ApiError.field('redirect_uri', 'This redirect URI is not in SOCIAL_AUTH_ALLOWED_REDIRECT_URIS.');
    return normalized;
  }
}

/** The URL as the allow-list holds it (WHATWG-normalized), or undefined when it is not one. */
function normalizedUrl(value: string): string | undefined {
  try {
    return new URL(value).href;
  } catch {
    return undefined;
  }
}
