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

/** Wrong credentials, unknown account or inactive user: one answer for all (SPEC section 2). */
export const LOGIN_FAILED = () =>
  new ApiError(401, 'authentication_failed', 'No active account found with the given credentials.', undefined, {
    'www-authenticate': 'Bearer realm="api"',
  });

/** Too many failed logins from this client or for this email: wait for the window to end. */
export const LOGINS_THROTTLED = (retryAfterSeconds: number) =>
  new ApiError(429, 'throttled', `Too many failed logins. Try again in ${retryAfterSeconds} seconds.`, undefined, {
    'retry-after': String(retryAfterSeconds),
  });

/** The per-IP count of failed logins, which password and social logins share. */
export const loginFailuresPerIpKey = (clientIp: string) => `login-failures:ip:${clientIp}`;

/**
 * Email and password → a session. Unknown email, wrong password and inactive user get the same
 * answer in about the same time (a dummy hash is verified when there is no user), and failures
 * are counted per email and client IP (strict: an attacker elsewhere cannot lock the owner out),
 * per email from anywhere (much higher) and per client IP: past a limit → 429 until its window ends.
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
    const normalized = email.trim().toLowerCase();
    const limits: [key: string, allowed: number][] = [
      [`login-failures:email-ip:${normalized}|${clientIp}`, this.config.loginFailuresPerEmailAndIp],
      [`login-failures:email:${normalized}`, this.config.loginFailuresPerEmail],
      [loginFailuresPerIpKey(clientIp), this.config.loginFailuresPerIp],
    ];
    const counts = await Promise.all(limits.map(([key]) => this.limiter.peek(key, window)));
    const retryAfter = Math.max(...counts.map((count, index) => (count.count >= limits[index]![1] ? count.resetSeconds : 0)));
    if (retryAfter > 0) throw LOGINS_THROTTLED(retryAfter);

    const user = await this.users.findByEmail(email);
    const passwordMatches = await this.hasher.verify(user?.passwordHash ?? (await this.dummy()), password);
    if (!user || !user.isActive || !passwordMatches) {
      await Promise.all(limits.map(([key]) => this.limiter.hit(key, window)));
      throw LOGIN_FAILED();
    }
    // A success clears this client's strict count; the per-email and per-IP counts run out on their own.
    await this.limiter.reset(limits[0]![0]);
    return this.sessions.start(user);
  }

  /** A real argon2id hash of nothing in particular, so an unknown email costs one verification too. */
  private dummy(): Promise<string> {
    this.dummyHash ??= this.hasher.hash('not-a-password-of-anyone');
    return this.dummyHash;
  }
}
