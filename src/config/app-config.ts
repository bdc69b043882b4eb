import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Validated, typed configuration. Built once at start from environment variables (SPEC section 9). */
export interface AppConfig {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  /** Unset means: run on the embedded PostgreSQL under `dataDir` (in production only with EMBEDDED_DATABASE=true). */
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /**
   * Connections of the pool one workspace may hold at once (issue 25, item 2), so that one workspace
   * flooding the API cannot take the whole pool from the others; default 80% of the pool, leaving
   * at least one connection. Its work past the share waits up to `workspacePoolWaitMs`, then 429.
   */
  readonly workspacePoolShare: number;
  readonly workspacePoolWaitMs: number;
  /** Named prepared statements for the hot statements (src/database/prepared-statements.ts). */
  readonly databasePreparedStatements: boolean;
  readonly redisUrl: string | undefined;
  /** Prefix of every key this service writes to Redis, so one Redis can serve several deployments. */
  readonly redisKeyPrefix: string;
  readonly dataDir: string;
  readonly jwtSecret: string;
  readonly jwtAccessTtlSeconds: number;
  readonly jwtRefreshTtlSeconds: number;
  readonly jwtIssuer: string;
  readonly encryptionKey: Buffer;
  /** Keys OAuth tokens were encrypted under before a rotation: still decrypt, never encrypt. */
  readonly encryptionPreviousKeys: readonly Buffer[];
  /** Google's OAuth 2 token revocation endpoint (deleting a Google Ads connection revokes its grant). */
  readonly googleOauthRevokeUrl: string;
  /** Meta Graph API base URL, version included, without a trailing slash. */
  readonly metaGraphUrl: string;
  /** Google's Data Manager API origin (audience members, user lists; SPEC 10.3), without version or trailing slash. */
  readonly googleDataManagerUrl: string;
  /**
   * The largest body of one Meta custom-audience members request (SPEC 10.3): Meta documents 10,000
   * rows per request but not a byte limit, and bodies over about 65,000 bytes fail in practice.
   */
  readonly metaMaxRequestBytes: number;
  /** Time limit of each call to an ad platform, so a slow provider cannot hold a request. */
  readonly providerTimeoutMs: number;
  /** The OAuth apps through which advertisers connect their ad accounts (SPEC section 6). */
  readonly adPlatforms: AdPlatformsConfig;
  readonly publicBaseUrl: string | undefined;
  /**
   * Host names (`api.example.com`, `.example.com` for a domain and its subdomains, `*` for any) a
   * request's Host may name when absolute links are built from it (PUBLIC_BASE_URL unset), as
   * Django's ALLOWED_HOSTS. Default: the loopback names outside production, none in production.
   */
  readonly allowedHosts: readonly string[];
  /**
   * Whose X-Forwarded-For/-Proto/-Host is believed (Fastify's trustProxy): `false` (the default),
   * a number of proxy hops, or addresses and CIDR ranges.
   */
  readonly trustedProxies: false | number | readonly string[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly rateLimitPerMinute: number;
  /**
   * Failed logins allowed within the window before 429: per email from one client IP (the strict
   * limit, which an attacker elsewhere cannot spend), per email from anywhere (much higher, against
   * distributed guessing), and per client IP whatever the email.
   */
  readonly loginFailuresPerEmailAndIp: number;
  readonly loginFailuresPerEmail: number;
  readonly loginFailuresPerIp: number;
  /** Requests per client IP per minute that end in 401 before that IP gets 429s instead. */
  readonly authenticationFailuresPerIpPerMinute: number;
  /** Personal MCP tokens a user may hold at once (not revoked, not expired); one more is a 409. */
  readonly mcpTokensPerUser: number;
  /** Origins allowed to call the API from a browser (CORS); empty: CORS off. */
  readonly corsOrigins: readonly string[];
  /** Bearer token that GET /metrics requires; unset: /metrics is public outside production and absent in it. */
  readonly metricsToken: string | undefined;
  readonly loginFailureWindowSeconds: number;
  /** How long a rotated API key keeps working by default. */
  readonly apiKeyRotationGraceHours: number;
  readonly shutdownTimeoutMs: number;
  /**
   * How long a client may take to send a whole request, head and body (Node's requestTimeout); the
   * head alone gets at most 10 s of it. A trickling client is answered 408 and disconnected.
   */
  readonly requestTimeoutMs: number;
  /** The largest file `POST /api/v1/imports/` takes (SPEC 10.1, default 1 GiB); every other body stays at 1 MiB. */
  readonly importMaxBytes: number;
  /** An import upload that sends nothing for this long is dropped (its staged rows roll back). */
  readonly importIdleTimeoutMs: number;
  readonly demoWorkspace: boolean;
  /** Social login (SPEC section 2): the providers that are configured, and where they may send users back. */
  readonly socialLogin: SocialLoginConfig;
  /** Background jobs (SPEC section 10.6). */
  readonly jobs: JobsConfig;
  /** Audience membership (SPEC 10.2). */
  readonly membership: MembershipConfig;
  /** Audience syncs to the ad platforms (SPEC 10.3). */
  readonly sync: SyncConfig;
  /** Signed webhooks (SPEC 10.5). */
  readonly webhooks: WebhooksConfig;
  /** Whom integrators reach and where they read more, as the API document's `info.contact` and `externalDocs` say. */
  readonly apiDocument: ApiDocumentConfig;
}

export interface SyncConfig {
  /** A sync waits this long after the last membership change of its audience, so a burst gives one run. */
  readonly debounceSeconds: number;
  /** An active audience syncs each destination at least this often; 0: only on change and by hand. */
  readonly intervalHours: number;
  /** The first retry of a platform request waits about this long, doubling each try (with jitter). */
  readonly retryBaseSeconds: number;
  /** Tries per platform request before the run fails. */
  readonly maxAttempts: number;
  /** Google's verdict on a request is first asked for this long after it was sent. */
  readonly googleStatusPollDelaySeconds: number;
  /** Then again after this, doubling, until Google has one. */
  readonly googleStatusPollBackoffSeconds: number;
  /** The shared budget of Data Manager requests per minute for the whole deployment (one Google Cloud project). */
  readonly googleRequestsPerMinute: number;
  /** The shared budget of Graph requests per minute per Meta ad account. */
  readonly metaRequestsPerMinute: number;
}

export interface WebhooksConfig {
  /** A delivery is a success only with a 2xx within this time (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** The first retry waits this long, each next one twice as long, for 24 hours; 0 retries at once (tests only). */
  readonly retryBaseSeconds: number;
}

export interface MembershipConfig {
  /** A recompute waits this long after the last change of its inputs, so a burst gives one run. */
  readonly debounceSeconds: number;
  /** Active rules and model audiences are recomputed at least this often; 0: only on change. */
  readonly refreshMinutes: number;
}

/**
 * The deployment's own facts in the API document: who answers integrators' questions, and where
 * its guides are. A URL may be a path of this service (relative to the document's server, `/`).
 */
export interface ApiDocumentConfig {
  readonly contactName: string;
  readonly contactEmail: string | undefined;
  readonly contactUrl: string | undefined;
  /** The guides; by default this service's own Swagger UI. */
  readonly docsUrl: string;
}

export interface JobsConfig {
  /** Jobs this process runs at once; 0: an API-only process (it still enqueues). */
  readonly workerConcurrency: number;
  /** The fallback poll for due jobs; new jobs are announced at once (LISTEN/NOTIFY). */
  readonly pollIntervalMs: number;
  /** How often a worker looks for jobs held by a worker process that is gone, and frees them. */
  readonly rescueIntervalSeconds: number;
  /** Where audience-worker serves /metrics and /healthz (it has no API port); unset: nowhere. */
  readonly workerMetricsPort: number | undefined;
}

/** Google signs in with OpenID Connect, from its issuer's discovery document. */
export interface GoogleLoginConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** Facebook signs in with OAuth 2 and the Graph `me` call. */
export interface FacebookLoginConfig {
  readonly appId: string;
  readonly appSecret: string;
  /** Where the login dialog lives (`https://www.facebook.com`), without a version. */
  readonly dialogUrl: string;
  /** The Graph API (`https://graph.facebook.com`), without a version. */
  readonly graphUrl: string;
  readonly graphVersion: string;
  /** Sign in by the email Facebook returns when no link exists yet. Off: Facebook does not say the email was verified. */
  readonly trustEmail: boolean;
}

/** Google Ads: OAuth 2 at Google, accounts from the Google Ads REST API. */
export interface GoogleAdsConfig {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly developerToken: string;
  readonly authorizationUrl: string;
  readonly tokenUrl: string;
  /** The Google Ads API origin (`https://googleads.googleapis.com`), without version. */
  readonly apiUrl: string;
  readonly apiVersion: string;
}

/** Meta Ads: Facebook Login's dialog, then the Graph API (`metaGraphUrl`, version included). */
export interface MetaAdsConfig {
  readonly appId: string;
  readonly appSecret: string;
  /** The login dialog, version included (`https://www.facebook.com/v25.0/dialog/oauth`). */
  readonly dialogUrl: string;
}

export interface AdPlatformsConfig {
  /** Absent: that platform cannot be connected by OAuth (its start answers 404). */
  readonly googleAds: GoogleAdsConfig | undefined;
  readonly metaAds: MetaAdsConfig | undefined;
  /** How often the token sweep runs; 0 turns it off (tests run it by hand). */
  readonly sweepIntervalSeconds: number;
}

export interface SocialLoginConfig {
  /** Absent: that provider is not configured and its endpoints answer 404. */
  readonly google: GoogleLoginConfig | undefined;
  readonly facebook: FacebookLoginConfig | undefined;
  /** The exact redirect URIs a client may ask for (djoser's SOCIAL_AUTH_ALLOWED_REDIRECT_URIS). */
  readonly allowedRedirectUris: readonly string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export interface LoadConfigOptions {
  /**
   * Whether a JWT_SECRET or ENCRYPTION_KEY missing outside production may be generated (and kept
   * under DATA_DIR). The server may: it is the one that uses them. The admin CLI may only on the
   * embedded database, whose data directory it shares with the server; on a DATABASE_URL the
   * server may run anywhere with secrets of its own, and a key the CLI made up would encrypt
   * tokens that server cannot read. Without it, a secret comes from the environment or a file the
   * server already wrote there, or is left empty (length 0) for the command to refuse.
   */
  generateSecrets?: boolean;
}

/**
 * The folder of this package (its package.json), from src/config/ or dist/src/config/ alike:
 * a relative DATA_DIR is resolved from here, not from the working directory, so the server and
 * the admin CLI find the same data directory wherever they are started from.
 */
function projectRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json')) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

export const PROJECT_ROOT = projectRoot();

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads and validates every setting at once, so an operator sees all mistakes in one message.
 * Secrets that production must provide (JWT_SECRET, ENCRYPTION_KEY) are generated once and kept
 * under the data directory in development, so a local restart does not log everyone out.
 */
export function loadConfig(env: Env = process.env, { generateSecrets = true }: LoadConfigOptions = {}): AppConfig {
  const problems: string[] = [];
  const nodeEnv = readEnum(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development', problems);
  const production = nodeEnv === 'production';
  const dataDir = resolve(PROJECT_ROOT, env.DATA_DIR?.trim() || '.data');

  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], problems);
  // SPEC section 9: in production the embedded database (data inside the container, lost with it)
  // is used only when asked for; outside production it is the default without DATABASE_URL.
  const embeddedDatabase = readBoolean(env, 'EMBEDDED_DATABASE', !production, problems);
  if (databaseUrl === undefined && !embeddedDatabase) {
    problems.push(
      production
        ? 'DATABASE_URL is required when NODE_ENV=production (postgres://user:password@host:5432/database); set EMBEDDED_DATABASE=true to run on the embedded PostgreSQL instead, whose data lives under DATA_DIR.'
        : 'DATABASE_URL is required when EMBEDDED_DATABASE=false.',
    );
  }
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:'], problems);
  const publicBaseUrl = readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:'], problems)?.replace(/\/+$/, '');
  const providerProtocols = production ? ['https:'] : ['http:', 'https:'];

  let jwtSecret = env.JWT_SECRET;
  if (jwtSecret === undefined || jwtSecret === '') {
    if (production) problems.push('JWT_SECRET is required when NODE_ENV=production (at least 32 characters).');
    jwtSecret = production ? '' : localSecret(dataDir, 'jwt-secret', generateSecrets, () => randomBytes(48).toString('base64url'));
  } else if (jwtSecret.length < 32) {
    problems.push('JWT_SECRET must be at least 32 characters long.');
  }

  let encryptionKey = Buffer.alloc(0);
  const encryptionKeyText = env.ENCRYPTION_KEY;
  if (encryptionKeyText === undefined || encryptionKeyText === '') {
    if (production) problems.push('ENCRYPTION_KEY is required when NODE_ENV=production (32 bytes, base64).');
    else
      encryptionKey = Buffer.from(
        localSecret(dataDir, 'encryption-key', generateSecrets, () => randomBytes(32).toString('base64')),
        'base64',
      );
  } else {
    encryptionKey = Buffer.from(encryptionKeyText, 'base64');
    if (encryptionKey.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encryptionKeyText)) {
      problems.push('ENCRYPTION_KEY must be 32 bytes encoded in base64 (44 characters).');
    }
  }

  const encryptionPreviousKeys = readPreviousKeys(env, problems);
  if (production && publicBaseUrl === undefined && !env.ALLOWED_HOSTS?.trim()) {
    problems.push('PUBLIC_BASE_URL or ALLOWED_HOSTS is required when NODE_ENV=production (list pages link to absolute URLs).');
  }

  const databasePoolSize = readInt(env, 'DATABASE_POOL_SIZE', 10, 1, 200, problems);
  const config: AppConfig = {
    nodeEnv,
    host: env.HOST?.trim() || '0.0.0.0',
    port: readInt(env, 'PORT', 3000, 0, 65535, problems),
    databaseUrl,
    databasePoolSize,
    workspacePoolShare: readInt(env, 'WORKSPACE_POOL_SHARE', defaultShareOf(databasePoolSize), 1, databasePoolSize, problems),
    workspacePoolWaitMs: readInt(env, 'WORKSPACE_POOL_WAIT_MS', 1000, 0, 60_000, problems),
    databasePreparedStatements: readBoolean(env, 'DATABASE_PREPARED_STATEMENTS', true, problems),
    redisUrl,
    redisKeyPrefix: env.REDIS_KEY_PREFIX?.trim() || 'audience-platform:',
    dataDir,
    jwtSecret,
    jwtAccessTtlSeconds: readInt(env, 'JWT_ACCESS_TTL_SECONDS', 15 * 60, 10, 24 * 3600, problems),
    jwtRefreshTtlSeconds: readInt(env, 'JWT_REFRESH_TTL_SECONDS', 7 * 24 * 3600, 60, 365 * 24 * 3600, problems),
    jwtIssuer: env.JWT_ISSUER?.trim() || 'audience-signal-platform',
    encryptionKey,
    encryptionPreviousKeys,
    // Provider URLs are https in production, as docs/security.md says of every one of them.
    googleOauthRevokeUrl: readUrl(env, 'GOOGLE_OAUTH_REVOKE_URL', providerProtocols, problems) ?? 'https://oauth2.googleapis.com/revoke',
    metaGraphUrl: (readUrl(env, 'META_GRAPH_URL', providerProtocols, problems) ?? 'https://graph.facebook.com/v25.0').replace(/\/+$/, ''),
    googleDataManagerUrl: (
      readUrl(env, 'GOOGLE_DATA_MANAGER_URL', providerProtocols, problems) ?? 'https://datamanager.googleapis.com'
    ).replace(/\/+$/, ''),
    metaMaxRequestBytes: readInt(env, 'META_MAX_REQUEST_BYTES', 60_000, 1_000, 10_000_000, problems),
    providerTimeoutMs: readInt(env, 'PROVIDER_TIMEOUT_MS', 5000, 1, 120_000, problems),
    adPlatforms: readAdPlatforms(env, production, problems),
    publicBaseUrl,
    allowedHosts: readAllowedHosts(env, production, problems),
    trustedProxies: readTrustedProxies(env, problems),
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info', problems),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000, problems),
    loginFailuresPerEmailAndIp: readInt(env, 'LOGIN_FAILURES_PER_EMAIL_AND_IP', 5, 1, 1_000_000, problems),
    loginFailuresPerEmail: readInt(env, 'LOGIN_FAILURES_PER_EMAIL', 100, 1, 1_000_000, problems),
    loginFailuresPerIp: readInt(env, 'LOGIN_FAILURES_PER_IP', 20, 1, 1_000_000, problems),
    authenticationFailuresPerIpPerMinute: readInt(env, 'AUTHENTICATION_FAILURES_PER_IP_PER_MINUTE', 60, 1, 1_000_000, problems),
    mcpTokensPerUser: readInt(env, 'MCP_TOKENS_PER_USER', 25, 1, 10_000, problems),
    corsOrigins: readOrigins(env, 'CORS_ORIGINS', problems),
    metricsToken: readMetricsToken(env, problems),
    loginFailureWindowSeconds: readInt(env, 'LOGIN_FAILURE_WINDOW_SECONDS', 15 * 60, 1, 24 * 3600, problems),
    apiKeyRotationGraceHours: readInt(env, 'API_KEY_ROTATION_GRACE_HOURS', 24, 0, 24 * 365, problems),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000, problems),
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000, problems),
    importMaxBytes: readInt(env, 'IMPORT_MAX_BYTES', 1024 ** 3, 1024, 64 * 1024 ** 3, problems),
    importIdleTimeoutMs: readInt(env, 'IMPORT_IDLE_TIMEOUT_MS', 30_000, 1_000, 600_000, problems),
    jobs: {
      workerConcurrency: readInt(env, 'WORKER_CONCURRENCY', 2, 0, 64, problems),
      pollIntervalMs: readInt(env, 'JOB_POLL_INTERVAL_MS', 2000, 50, 60_000, problems),
      rescueIntervalSeconds: readInt(env, 'JOB_RESCUE_INTERVAL_SECONDS', 30, 1, 3600, problems),
      workerMetricsPort: env.WORKER_METRICS_PORT?.trim() ? readInt(env, 'WORKER_METRICS_PORT', 0, 1, 65535, problems) : undefined,
    },
    membership: {
      debounceSeconds: readInt(env, 'MEMBERSHIP_DEBOUNCE_SECONDS', 5, 0, 3600, problems),
      refreshMinutes: readInt(env, 'MEMBERSHIP_REFRESH_MINUTES', 60, 0, 7 * 24 * 60, problems),
    },
    sync: {
      debounceSeconds: readInt(env, 'SYNC_DEBOUNCE_SECONDS', 60, 0, 24 * 3600, problems),
      intervalHours: readInt(env, 'SYNC_INTERVAL_HOURS', 24, 0, 24 * 365, problems),
      retryBaseSeconds: readNumber(env, 'SYNC_RETRY_BASE_SECONDS', 5, 0, 3600, problems),
      maxAttempts: readInt(env, 'SYNC_MAX_ATTEMPTS', 5, 1, 100, problems),
      googleStatusPollDelaySeconds: readNumber(env, 'GOOGLE_STATUS_POLL_DELAY_SECONDS', 1800, 0.01, 7 * 24 * 3600, problems),
      googleStatusPollBackoffSeconds: readNumber(env, 'GOOGLE_STATUS_POLL_BACKOFF_SECONDS', 300, 0.01, 7 * 24 * 3600, problems),
      googleRequestsPerMinute: readInt(env, 'GOOGLE_REQUESTS_PER_MINUTE', 300, 1, 1_000_000, problems),
      metaRequestsPerMinute: readInt(env, 'META_REQUESTS_PER_MINUTE', 600, 1, 1_000_000, problems),
    },
    webhooks: {
      timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 5000, 100, 60_000, problems),
      retryBaseSeconds: readInt(env, 'WEBHOOK_RETRY_BASE_SECONDS', 30, 0, 3600, problems),
    },
    demoWorkspace: readBoolean(env, 'DEMO_WORKSPACE', !production, problems),
    socialLogin: readSocialLogin(env, production, problems),
    apiDocument: readApiDocument(env, production, problems),
  };
  if (production && publicBaseUrl === undefined && (config.adPlatforms.googleAds || config.adPlatforms.metaAds)) {
    // The OAuth callback and the page it returns to are built on it; a Host header must not decide them.
    problems.push('PUBLIC_BASE_URL is required when NODE_ENV=production and an ad platform (GOOGLE_ADS_* or META_APP_*) is configured.');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/**
 * ENCRYPTION_PREVIOUS_KEYS: comma-separated base64 keys of 32 bytes. A bad entry is named by its
 * position, never echoed, since it is a secret.
 */
function readPreviousKeys(env: Env, problems: string[]): Buffer[] {
  const raw = env.ENCRYPTION_PREVIOUS_KEYS?.trim();
  if (raw === undefined || raw === '') return [];
  const keys: Buffer[] = [];
  raw.split(',').forEach((entry, index) => {
    const text = entry.trim();
    const key = Buffer.from(text, 'base64');
    if (key.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
      problems.push(`ENCRYPTION_PREVIOUS_KEYS entry ${index + 1} must be 32 bytes encoded in base64 (44 characters).`);
    } else {
      keys.push(key);
    }
  });
  return keys;
}

/** CORS_ORIGINS: comma-separated origins (`https://app.example.com`), each scheme, host and optional port only. */
function readOrigins(env: Env, name: string, problems: string[]): string[] {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return [];
  const origins: string[] = [];
  for (const entry of raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry.replace(/\/$/, '')) origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined)
      problems.push(`${name} entries must be origins such as https://app.example.com (got "${entry.slice(0, 100)}").`);
    else origins.push(origin);
  }
  return origins;
}

function readAllowedHosts(env: Env, production: boolean, problems: string[]): string[] {
  const raw = env.ALLOWED_HOSTS?.trim();
  if (raw === undefined || raw === '') return production ? [] : ['localhost', '127.0.0.1', '[::1]'];
  const hosts = raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const host of hosts) {
    if (!/^(\*|\.?[a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(host)) {
      problems.push(`ALLOWED_HOSTS entries must be host names without scheme or port (got "${host.slice(0, 100)}").`);
    }
  }
  return hosts;
}

/** TRUSTED_PROXIES: a hop count, or comma-separated IP addresses and CIDR ranges. */
function readTrustedProxies(env: Env, problems: string[]): false | number | string[] {
  const raw = env.TRUSTED_PROXIES?.trim();
  if (raw === undefined || raw === '') return false;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 10) problems.push('TRUSTED_PROXIES as a hop count must be between 1 and 10.');
    return hops;
  }
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const version = isIP(address ?? '');
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 6 ? 128 : 32));
    if (version === 0 || !validBits || extra !== undefined) {
      problems.push(`TRUSTED_PROXIES entries must be IP addresses or CIDR ranges (got "${entry.slice(0, 100)}").`);
    }
  }
  return entries;
}

/** The ad-platform OAuth apps; like the social-login providers, a platform is on when its id and secret are set. */
function readAdPlatforms(env: Env, production: boolean, problems: string[]): AdPlatformsConfig {
  const secure = production ? ['https:'] : ['http:', 'https:'];
  const url = (name: string, fallback: string) => (readUrl(env, name, secure, problems) ?? fallback).replace(/\/+$/, '');
  const google = readPair(env, 'GOOGLE_ADS_CLIENT_ID', 'GOOGLE_ADS_CLIENT_SECRET', problems);
  const developerToken = env.GOOGLE_ADS_DEVELOPER_TOKEN?.trim() ?? '';
  if (google && developerToken === '')
    problems.push('GOOGLE_ADS_DEVELOPER_TOKEN is required with GOOGLE_ADS_CLIENT_ID (Google Ads API Center).');
  const apiVersion = env.GOOGLE_ADS_API_VERSION?.trim() || 'v25';
  if (!/^v\d{1,3}$/.test(apiVersion)) problems.push(`GOOGLE_ADS_API_VERSION must look like v25 (got "${apiVersion.slice(0, 20)}").`);
  else if (Number(apiVersion.slice(1)) <= 17) problems.push(`GOOGLE_ADS_API_VERSION ${apiVersion} is retired by Google; use v18 or later.`);
  const meta = readPair(env, 'META_APP_ID', 'META_APP_SECRET', problems);
  return {
    googleAds: google && {
      clientId: google[0],
      clientSecret: google[1],
      developerToken,
      authorizationUrl: url('GOOGLE_ADS_AUTHORIZATION_URL', 'https://accounts.google.com/o/oauth2/v2/auth'),
      tokenUrl: url('GOOGLE_ADS_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
      apiUrl: url('GOOGLE_ADS_API_URL', 'https://googleads.googleapis.com'),
      apiVersion,
    },
    metaAds: meta && {
      appId: meta[0],
      appSecret: meta[1],
      dialogUrl: url('META_DIALOG_URL', 'https://www.facebook.com/v25.0/dialog/oauth'),
    },
    sweepIntervalSeconds: readInt(env, 'CONNECTION_SWEEP_INTERVAL_SECONDS', 300, 0, 86_400, problems),
  };
}

/** An OAuth client id and its secret: both or neither. The secret is never echoed. */
function readPair(env: Env, idName: string, secretName: string, problems: string[]): [string, string] | undefined {
  const id = env[idName]?.trim() ?? '';
  const secret = env[secretName]?.trim() ?? '';
  if (id === '' && secret === '') return undefined;
  if (id === '' || secret === '') {
    problems.push(`${idName} and ${secretName} are set together or not at all.`);
    return undefined;
  }
  if (id.length > 255 || secret.length > 255) problems.push(`${idName} and ${secretName} must be at most 255 characters.`);
  return [id, secret];
}

/**
 * The social-login settings. A provider is configured by its client id and secret together; its
 * URLs have defaults (the real providers) and must be https in production. Secrets are never echoed.
 */
function readSocialLogin(env: Env, production: boolean, problems: string[]): SocialLoginConfig {
  const secure = production ? ['https:'] : ['http:', 'https:'];
  const pair = (idName: string, secretName: string) => readPair(env, idName, secretName, problems);
  const base = (name: string, fallback: string) => (readUrl(env, name, secure, problems) ?? fallback).replace(/\/+$/, '');

  const googleCredentials = pair('GOOGLE_OAUTH2_CLIENT_ID', 'GOOGLE_OAUTH2_CLIENT_SECRET');
  const googleIssuer = base('GOOGLE_OIDC_ISSUER', 'https://accounts.google.com');
  const facebookCredentials = pair('FACEBOOK_APP_ID', 'FACEBOOK_APP_SECRET');
  const graphVersion = env.FACEBOOK_GRAPH_VERSION?.trim() || 'v25.0';
  if (!/^v\d{1,3}\.\d{1,3}$/.test(graphVersion))
    problems.push(`FACEBOOK_GRAPH_VERSION must look like v25.0 (got "${graphVersion.slice(0, 20)}").`);
  const facebook: FacebookLoginConfig | undefined = facebookCredentials && {
    appId: facebookCredentials[0],
    appSecret: facebookCredentials[1],
    dialogUrl: base('FACEBOOK_DIALOG_URL', 'https://www.facebook.com'),
    graphUrl: base('FACEBOOK_GRAPH_URL', 'https://graph.facebook.com'),
    graphVersion,
    trustEmail: readBoolean(env, 'FACEBOOK_TRUST_EMAIL', false, problems),
  };

  const allowedRedirectUris: string[] = [];
  for (const entry of (env.SOCIAL_AUTH_ALLOWED_REDIRECT_URIS ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    // The token request sends the redirect URI without its query (as the provider compares it), so none may carry one.
    if (!url || !secure.includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      problems.push(
        `SOCIAL_AUTH_ALLOWED_REDIRECT_URIS entries must be absolute ${production ? 'https' : 'http(s)'} URLs without query or fragment (got "${entry.slice(0, 100)}").`,
      );
    } else {
      allowedRedirectUris.push(url.href);
    }
  }
  return {
    google: googleCredentials && { issuer: googleIssuer, clientId: googleCredentials[0], clientSecret: googleCredentials[1] },
    facebook,
    allowedRedirectUris,
  };
}

/** 80% of the pool, and at least one connection left to the other workspaces when the pool has two or more. */
function defaultShareOf(poolSize: number): number {
  return Math.max(1, Math.min(poolSize - 1, Math.floor(poolSize * 0.8)));
}

/** API_CONTACT_NAME, API_CONTACT_EMAIL, API_CONTACT_URL and API_DOCS_URL: the API document's contact and guides. */
function readApiDocument(env: Env, production: boolean, problems: string[]): ApiDocumentConfig {
  const contactName = env.API_CONTACT_NAME?.trim() || 'API support of this deployment';
  if (contactName.length > 100) problems.push('API_CONTACT_NAME must be at most 100 characters.');
  const contactEmail = env.API_CONTACT_EMAIL?.trim() || undefined;
  if (contactEmail !== undefined && !/^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/.test(contactEmail))
    problems.push(`API_CONTACT_EMAIL must be an email address (got "${contactEmail.slice(0, 100)}").`);
  const link = (name: string): string | undefined => {
    const raw = env[name]?.trim() || undefined;
    // A path of this service, or an absolute URL (https in production, like every link the service hands out there).
    if (raw === undefined || /^\/(?!\/)[\x21-\x7e]*$/.test(raw)) return raw;
    return readUrl(env, name, production ? ['https:'] : ['http:', 'https:'], problems);
  };
  return { contactName, contactEmail, contactUrl: link('API_CONTACT_URL'), docsUrl: link('API_DOCS_URL') ?? '/api/docs/' };
}

/** METRICS_TOKEN: a secret of at least 16 characters; never echoed. */
function readMetricsToken(env: Env, problems: string[]): string | undefined {
  const raw = env.METRICS_TOKEN?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) problems.push('METRICS_TOKEN must be at least 16 visible ASCII characters.');
  return raw;
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}").`);
    return fallback;
  }
  return Number(raw);
}

/** A non-negative decimal (seconds that tests shorten below one), within [min, max]. */
function readNumber(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be a number from ${min} to ${max} (got "${raw}").`);
    return fallback;
  }
  return Number(raw);
}

function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T, problems: string[]): T {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}").`);
    return fallback;
  }
  return raw as T;
}

function readBoolean(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  problems.push(`${name} must be true or false (got "${raw}").`);
  return fallback;
}

function readUrl(env: Env, name: string, protocols: string[], problems: string[]): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  try {
    const url = new URL(raw);
    if (!protocols.includes(url.protocol)) {
      problems.push(`${name} must be a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} URL.`);
    }
  } catch {
    // Never echo the value: a database URL carries a password.
    problems.push(`${name} is not a valid URL.`);
  }
  return raw;
}

/**
 * A development-only secret, generated on first use and kept (mode 0600) in the data directory;
 * '' when there is none yet and `generate` is off (LoadConfigOptions).
 */
function localSecret(dataDir: string, name: string, generate: boolean, create: () => string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!generate) return '';
  mkdirSync(dataDir, { recursive: true });
  const secret = create();
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
