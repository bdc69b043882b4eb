import { Inject, Injectable } from '@nestjs/common';
import { calculatePKCECodeChallenge, randomPKCECodeVerifier } from 'openid-client';
import type { Logger } from 'pino';
import { matchesHash, randomSecret, sha256 } from '../../common/crypto/secret-hash.js';
import { ApiError } from '../../common/errors/api-error.js';
import { isDependencyUnavailable } from '../../common/errors/database-errors.js';
import { TenantContext } from '../../common/tenancy/tenant-context.js';
import { Clock } from '../../common/time/clock.js';
import { LOGGER } from '../../logging/logger.token.js';
import { UsersService } from '../../users/users.service.js';
import { AdPlatformClients, platformOfSlug } from './ad-platform-clients.js';
import { ConnectionFlowStatesRepository } from './connection-flow-states.repository.js';
import { ConnectionGrants } from './connection-grants.js';
import { PlatformError, type PlatformFailure } from './platforms/ad-platform-client.js';
import { tenantOfStoredRow } from './stored-tenant.js';
import { RETURN_TO_PATTERN } from './dto/connection-flow.dto.js';

/** How long a started flow may take to come back. */
export const FLOW_LIFETIME_MS = 10 * 60 * 1000;

/** Where the browser lands when the flow names no page of the web interface. */
export const DEFAULT_RETURN_TO = '/app/connections';

/** What the callback tells the web interface, as `?error=` on its redirect (or `?connected=N` on success). */
export type FlowOutcome =
  | PlatformFailure
  | 'access_denied'
  | 'invalid_state'
  | 'expired_state'
  | 'browser_mismatch'
  | 'missing_code'
  | 'no_accounts'
  | 'permission_denied'
  | 'temporarily_unavailable'
  | 'server_error';

/** A path of the web interface: `/app` or below it, with no scheme, host, backslash, query or fragment. */
const RETURN_TO = new RegExp(RETURN_TO_PATTERN);

/**
 * "Connect Google Ads / Meta Ads" (SPEC section 6). `start` keeps who, which workspace, which
 * platform, the PKCE verifier and the return page in a state row; `callback` spends that state,
 * exchanges the code, checks the granted scopes, lists the accounts and creates or refreshes one
 * connection per account in the starting user's workspace, in one transaction. The callback
 * never answers with an error page: every outcome is a redirect to the web interface.
 */
@Injectable()
export class ConnectionFlowService {
  constructor(
    private readonly clients: AdPlatformClients,
    private readonly states: ConnectionFlowStatesRepository,
    private readonly grants: ConnectionGrants,
    private readonly users: UsersService,
    private readonly tenants: TenantContext,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The provider's authorization URL for a user of the current workspace. */
  async start(
    slug: string,
    user: { userId: number; customerId: number },
    returnTo: string | undefined,
    origin: string,
    browser: string,
  ): Promise<{ authorization_url: string }> {
    const client = this.clients.bySlug(slug);
    if (!client) throw ApiError.notFound(`Connecting "${slug.slice(0, 32)}" is not available here.`);
    const path = returnTo ?? DEFAULT_RETURN_TO;
    // Dot segments, plain or percent-encoded (`/app/../x`, `/app/%2e%2e/x`), would resolve out of /app: the path must be its own normal form.
    if (path.length > 512 || !RETURN_TO.test(path) || new URL(path, 'http://x').pathname !== path)
      throw ApiError.field('return_to', 'Must be a path of the web interface, such as /app/connections.');
    const state = randomSecret();
    const codeVerifier = randomPKCECodeVerifier();
    const redirectUri = `${origin}/oauth/connections/${slug}/callback`;
    const now = this.clock.now();
    await this.states.insert(
      {
        stateHash: sha256(state),
        platform: client.platform,
        customerId: user.customerId,
        userId: user.userId,
        codeVerifier,
        redirectUri,
        returnUrl: `${origin}${path}`,
        browserHash: sha256(browser),
        expiresAt: new Date(now.getTime() + FLOW_LIFETIME_MS),
      },
      now,
    );
    const url = client.authorizationUrl({ state, redirectUri, codeChallenge: await calculatePKCECodeChallenge(codeVerifier) });
    return { authorization_url: url.href };
  }

  /**
   * Finishes a flow and answers where to send the browser: the flow's return page with
   * `connected=N`, or with `error=<outcome>`; without a usable state, `fallback` with the error.
   */
  async callback(slug: string, query: Record<string, unknown>, fallback: string, browser: string | undefined): Promise<string> {
    const platform = platformOfSlug(slug);
    const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
    const state = text('state');
    const withOutcome = (base: string, outcome: Record<string, string>) => {
      const url = new URL(base);
      for (const [name, value] of Object.entries({ platform: platform ?? slug.slice(0, 32), ...outcome }))
        url.searchParams.set(name, value);
      return url.href;
    };
    const failed = (base: string, outcome: FlowOutcome) => withOutcome(base, { error: outcome });

    if (!platform || !state || state.length > 128) return failed(fallback, 'invalid_state');
    let pending;
    try {
      pending = await this.states.take(sha256(state));
    } catch (error) {
      if (isDependencyUnavailable(error)) return failed(fallback, 'temporarily_unavailable');
      throw error;
    }
    if (!pending || pending.platform !== platform) return failed(fallback, 'invalid_state');
    const back = pending.returnUrl;
    if (pending.expiresAt.getTime() <= this.clock.nowMs()) return failed(back, 'expired_state');
    if (browser === undefined || !matchesHash(browser, pending.browserHash)) return failed(back, 'browser_mismatch');
    // Google and Meta both answer a refused consent with ?error=access_denied.
    if (text('error') !== undefined) return failed(back, 'access_denied');
    const code = text('code');
    if (!code || code.length > 4096) return failed(back, 'missing_code');

    const context = { customer: pending.customerId, user_id: pending.userId, platform };
    try {
      const user = await this.users.findById(pending.userId);
      // The role is read again: a user demoted or deactivated since the start connects nothing.
      if (!user || !user.isActive || user.role === 'viewer' || user.customerId !== pending.customerId)
        return failed(back, 'permission_denied');
      const client = this.clients.get(platform);
      if (!client) return failed(back, 'provider_error');
      const tokens = await client.exchangeCode({ code, redirectUri: pending.redirectUri, codeVerifier: pending.codeVerifier });
      const accounts = await client.listAccounts(tokens.accessToken);
      if (accounts.length === 0) return failed(back, 'no_accounts');
      const connected = await this.tenants.run(tenantOfStoredRow(pending), () => this.grants.connect(platform, accounts, tokens, user.id));
      this.logger.info({ ...context, connections: connected.map((connection) => connection.id) }, 'ad accounts connected');
      return withOutcome(back, { connected: String(connected.length) });
    } catch (error) {
      if (error instanceof PlatformError) {
        this.logger.warn({ ...context, reason: error.failure }, 'connection flow failed');
        return failed(back, error.failure);
      }
      if (isDependencyUnavailable(error)) return failed(back, 'temporarily_unavailable');
      this.logger.error({ ...context, err: error }, 'connection flow failed');
      return failed(back, 'server_error');
    }
  }
}
