import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { RATE_LIMITER } from '../common/rate-limit/rate-limiter.token.js';
import type { RateLimiter } from '../common/rate-limit/rate-limiter.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { UsersService } from '../users/users.service.js';
import { SessionsService } from './sessions.service.js';
import type { TokenPair } from './tokens/token.service.js';

const LOGIN_FAILED = () =>
  new ApiError(401, 'authentication_failed', 'No active account found with the given credentials.', undefined, {
    'www-authenticate': 'Bearer realm="api"',
  });

/**
 * Email and password → a session. Unknown email, wrong password and inactive user get the same
 * answer in about the same time (a dummy hash is verified when there is no user), and failures
 * are counted per email and per client IP: past the limit → 429 until the window ends.
 */
@Injectable()
export class LoginService {
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async login(email: string, password: string, clientIp: string): Promise<TokenPair> {
    const window = this.config.loginFailureWindowSeconds;
    const emailKey = `login-failures:email:${email.trim().toLowerCase()}`;
    const ipKey = `login-failures:ip:${clientIp}`;
    const [byEmail, byIp] = await Promise.all([this.limiter.peek(emailKey, window), this.limiter.peek(ipKey, window)]);
    const blocked = [
      byEmail.count >= this.config.loginFailuresPerEmail ? byEmail.resetSeconds : 0,
      byIp.count >= this.config.loginFailuresPerIp ? byIp.resetSeconds : 0,
    ];
    const retryAfter = Math.max(...blocked);
    if (retryAfter > 0) {
      throw new ApiError(429, 'throttled', `Too many failed logins. Try again in ${retryAfter} seconds.`, undefined, {
        'retry-after': String(retryAfter),
      });
    }

    const user = await this.users.findByEmail(email);
    const passwordMatches = await this.hasher.verify(user?.passwordHash ?? (await this.dummy()), password);
    if (!user || !user.isActive || !passwordMatches) {
      await Promise.all([this.limiter.hit(emailKey, window), this.limiter.hit(ipKey, window)]);
      throw LOGIN_FAILED();
    }
    await this.limiter.reset(emailKey);
    return this.sessions.start(user);
  }

  /** A real argon2id hash of nothing in particular, so an unknown email costs one verification too. */
  private dummy(): Promise<string> {
    this.dummyHash ??= this.hasher.hash('not-a-password-of-anyone');
    return this.dummyHash;
  }
}
