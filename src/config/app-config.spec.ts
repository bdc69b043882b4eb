import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from './app-config.js';

const KEY = Buffer.alloc(32, 1).toString('base64');
const SECRET = 'x'.repeat(32);

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY });
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: undefined,
      redisUrl: undefined,
      jwtAccessTtlSeconds: 900,
      jwtRefreshTtlSeconds: 604800,
      rateLimitPerMinute: 600,
      logLevel: 'info',
      nodeEnv: 'development',
    });
    expect(config.encryptionKey).toHaveLength(32);
  });

  it('requires DATABASE_URL, JWT_SECRET, ENCRYPTION_KEY and a public origin or allowed hosts in production, reporting every problem at once', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([
      expect.stringContaining('DATABASE_URL is required when NODE_ENV=production'),
      expect.stringContaining('JWT_SECRET is required'),
      expect.stringContaining('ENCRYPTION_KEY is required'),
      expect.stringContaining('PUBLIC_BASE_URL or ALLOWED_HOSTS is required'),
    ]);
  });

  it('runs production on the embedded database only when EMBEDDED_DATABASE=true asks for it', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, ALLOWED_HOSTS: 'api.example.com' };
    expect(problemsOf(production)[0]).toMatch(/set EMBEDDED_DATABASE=true to run on the embedded PostgreSQL/);
    expect(loadConfig({ ...production, EMBEDDED_DATABASE: 'true' }).databaseUrl).toBeUndefined();
    expect(loadConfig({ ...production, DATABASE_URL: 'postgres://db/x' }).databaseUrl).toBe('postgres://db/x');
    // Outside production the embedded database stays the default, and can be refused.
    expect(problemsOf({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY })).toEqual([]);
    expect(problemsOf({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, EMBEDDED_DATABASE: 'false' })).toEqual([
      'DATABASE_URL is required when EMBEDDED_DATABASE=false.',
    ]);
  });

  it('reads ALLOWED_HOSTS and TRUSTED_PROXIES, refusing what they cannot mean', () => {
    const config = loadConfig({
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      ALLOWED_HOSTS: 'API.example.com, .example.org',
      TRUSTED_PROXIES: '10.0.0.0/8, ::1',
    });
    expect(config.allowedHosts).toEqual(['api.example.com', '.example.org']);
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', '::1']);
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, TRUSTED_PROXIES: '2' }).trustedProxies).toBe(2);
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY }).trustedProxies).toBe(false);
    const problems = problemsOf({
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      ALLOWED_HOSTS: 'https://api.example.com',
      TRUSTED_PROXIES: '10.0.0.0/40,proxy.local',
      CORS_ORIGINS: 'https://app.example.com/path',
      METRICS_TOKEN: 'short',
    });
    expect(problems).toHaveLength(5);
  });

  it('rejects a short JWT_SECRET, a bad ENCRYPTION_KEY, a bad port and a bad log level', () => {
    const problems = problemsOf({ JWT_SECRET: 'short', ENCRYPTION_KEY: 'abc', PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/JWT_SECRET must be at least 32/);
    expect(problems.join('\n')).toMatch(/ENCRYPTION_KEY must be 32 bytes/);
    expect(problems.join('\n')).toMatch(/PORT must be an integer/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL must be one of/);
  });

  it('never echoes a database URL, which carries a password', () => {
    const problems = problemsOf({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).not.toContain('hunter2');
  });

  it('strips a trailing slash from PUBLIC_BASE_URL', () => {
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe(
      'https://api.example.com',
    );
  });

  it("resolves DATA_DIR from the project's folder, not the working directory", () => {
    const previous = process.cwd();
    process.chdir(tmpdir());
    try {
      const root = fileURLToPath(new URL('../../', import.meta.url));
      expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY }).dataDir).toBe(join(root, '.data'));
      expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, DATA_DIR: 'var/data' }).dataDir).toBe(join(root, 'var', 'data'));
      expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, DATA_DIR: '/srv/data' }).dataDir).toBe('/srv/data');
    } finally {
      process.chdir(previous);
    }
  });

  it('reads kept development secrets but makes up none when told not to (the admin CLI on a DATABASE_URL)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'config-spec-'));
    const none = loadConfig({ DATA_DIR: dataDir }, { generateSecrets: false });
    expect({ jwtSecret: none.jwtSecret, encryptionKey: none.encryptionKey.length }).toEqual({ jwtSecret: '', encryptionKey: 0 });
    expect(readdirSync(dataDir)).toEqual([]);
    const kept = loadConfig({ DATA_DIR: dataDir });
    const read = loadConfig({ DATA_DIR: dataDir }, { generateSecrets: false });
    expect(read.jwtSecret).toBe(kept.jwtSecret);
    expect(read.encryptionKey.equals(kept.encryptionKey)).toBe(true);
  });

  it('generates development secrets once and keeps them in the data directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'config-spec-'));
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(second.jwtSecret).toBe(first.jwtSecret);
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
    expect(readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim()).toBe(first.jwtSecret);
  });
});

describe('loadConfig: ad-platform connections', () => {
  it('defaults the provider endpoints and timeout and has no previous keys', () => {
    const config = loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY });
    expect(config).toMatchObject({
      encryptionPreviousKeys: [],
      googleOauthRevokeUrl: 'https://oauth2.googleapis.com/revoke',
      metaGraphUrl: 'https://graph.facebook.com/v25.0',
      providerTimeoutMs: 5000,
    });
  });

  it('reads previous encryption keys, provider URLs (without a trailing slash) and the timeout', () => {
    const previous = [Buffer.alloc(32, 2), Buffer.alloc(32, 3)];
    const config = loadConfig({
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      ENCRYPTION_PREVIOUS_KEYS: previous.map((key) => key.toString('base64')).join(' , '),
      GOOGLE_OAUTH_REVOKE_URL: 'http://127.0.0.1:9999/revoke',
      META_GRAPH_URL: 'http://127.0.0.1:9999/v19.0/',
      GOOGLE_DATA_MANAGER_URL: 'http://127.0.0.1:9998/',
      META_MAX_REQUEST_BYTES: '2000',
      PROVIDER_TIMEOUT_MS: '250',
    });
    expect(config.encryptionPreviousKeys.map((key) => key.toString('hex'))).toEqual(previous.map((key) => key.toString('hex')));
    expect(config.googleOauthRevokeUrl).toBe('http://127.0.0.1:9999/revoke');
    expect(config.metaGraphUrl).toBe('http://127.0.0.1:9999/v19.0');
    expect(config.googleDataManagerUrl).toBe('http://127.0.0.1:9998');
    expect(config.metaMaxRequestBytes).toBe(2000);
    expect(config.providerTimeoutMs).toBe(250);
  });

  it('defaults the retries of platform requests (SPEC 10.3 "Failures") and bounds them', () => {
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY }).sync).toMatchObject({ retryBaseSeconds: 5, maxAttempts: 5 });
    expect(
      loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, SYNC_RETRY_BASE_SECONDS: '0', SYNC_MAX_ATTEMPTS: '2' }).sync,
    ).toMatchObject({
      retryBaseSeconds: 0,
      maxAttempts: 2,
    });
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, SYNC_RETRY_BASE_SECONDS: '0.25' }).sync.retryBaseSeconds).toBe(0.25);
    const problems = problemsOf({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, SYNC_MAX_ATTEMPTS: '0' });
    expect(problems.join('\n')).toMatch(/SYNC_MAX_ATTEMPTS must be an integer from 1 to 100/);
  });

  it('defaults the Data Manager API origin and the Meta request size of SPEC 10.3, and bounds the size', () => {
    const config = loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY });
    expect(config.googleDataManagerUrl).toBe('https://datamanager.googleapis.com');
    expect(config.metaMaxRequestBytes).toBe(60_000);
    const problems = problemsOf({
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      META_MAX_REQUEST_BYTES: '999',
      GOOGLE_DATA_MANAGER_URL: 'nope',
    });
    expect(problems.join('\n')).toMatch(/META_MAX_REQUEST_BYTES must be an integer from 1000 to 10000000/);
    expect(problems.join('\n')).toMatch(/GOOGLE_DATA_MANAGER_URL is not a valid URL/);
  });

  it('defaults the webhook time-out and retry base of SPEC 10.5, takes 0 as the base, and bounds both', () => {
    expect(loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY }).webhooks).toEqual({ timeoutMs: 5000, retryBaseSeconds: 30 });
    expect(
      loadConfig({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, WEBHOOK_TIMEOUT_MS: '250', WEBHOOK_RETRY_BASE_SECONDS: '0' }).webhooks,
    ).toEqual({ timeoutMs: 250, retryBaseSeconds: 0 });
    const problems = problemsOf({ JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, WEBHOOK_TIMEOUT_MS: '0', WEBHOOK_RETRY_BASE_SECONDS: '-1' });
    expect(problems.join('\n')).toMatch(/WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000/);
    expect(problems.join('\n')).toMatch(/WEBHOOK_RETRY_BASE_SECONDS must be an integer from 0 to 3600/);
  });

  it('rejects a bad previous key without echoing it, bad provider URLs and a bad timeout', () => {
    const secretLooking = Buffer.alloc(16, 9).toString('base64');
    const problems = problemsOf({
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      ENCRYPTION_PREVIOUS_KEYS: `${Buffer.alloc(32, 2).toString('base64')},${secretLooking}`,
      GOOGLE_OAUTH_REVOKE_URL: 'ftp://example.com/revoke',
      META_GRAPH_URL: 'not a url',
      PROVIDER_TIMEOUT_MS: '0',
    });
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/ENCRYPTION_PREVIOUS_KEYS entry 2 must be 32 bytes/);
    expect(problems.join('\n')).not.toContain(secretLooking);
    expect(problems.join('\n')).toMatch(/GOOGLE_OAUTH_REVOKE_URL must be a http:\/\/ or https:\/\/ URL/);
    expect(problems.join('\n')).toMatch(/META_GRAPH_URL is not a valid URL/);
    expect(problems.join('\n')).toMatch(/PROVIDER_TIMEOUT_MS must be an integer/);
  });

  it('takes only https provider URLs in production (docs/security.md)', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/app',
      PUBLIC_BASE_URL: 'https://api.example.com',
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      GOOGLE_OAUTH_REVOKE_URL: 'http://revoke.example/revoke',
      META_GRAPH_URL: 'http://graph.example/v25.0',
      GOOGLE_DATA_MANAGER_URL: 'http://datamanager.example',
    });
    expect(problems.join('\n')).toMatch(/GOOGLE_DATA_MANAGER_URL must be a https:\/\/ URL/);
    expect(problems.join('\n')).toMatch(/GOOGLE_OAUTH_REVOKE_URL must be a https:\/\/ URL/);
    expect(problems.join('\n')).toMatch(/META_GRAPH_URL must be a https:\/\/ URL/);
  });
});

describe("loadConfig: a workspace's share of the database pool", () => {
  const base = { JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY };
  const share = (env: Record<string, string>) => {
    const config = loadConfig({ ...base, ...env });
    return { share: config.workspacePoolShare, waitMs: config.workspacePoolWaitMs };
  };

  it('defaults to 80% of the pool, leaving the other workspaces at least one connection, and a 1 s wait', () => {
    expect(share({})).toEqual({ share: 8, waitMs: 1000 });
    expect(share({ DATABASE_POOL_SIZE: '2' })).toEqual({ share: 1, waitMs: 1000 });
    expect(share({ DATABASE_POOL_SIZE: '1' })).toEqual({ share: 1, waitMs: 1000 });
    expect(share({ DATABASE_POOL_SIZE: '50', WORKSPACE_POOL_SHARE: '10', WORKSPACE_POOL_WAIT_MS: '250' })).toEqual({
      share: 10,
      waitMs: 250,
    });
  });

  it('refuses a share larger than the pool', () => {
    expect(problemsOf({ ...base, DATABASE_POOL_SIZE: '4', WORKSPACE_POOL_SHARE: '5' })).toEqual([
      'WORKSPACE_POOL_SHARE must be an integer from 1 to 4 (got "5").',
    ]);
  });
});

describe('loadConfig: the API document of this deployment', () => {
  const base = { JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY };

  it('names a contact and points the guides at the Swagger UI of this service by default', () => {
    expect(loadConfig(base).apiDocument).toEqual({
      contactName: 'API support of this deployment',
      contactEmail: undefined,
      contactUrl: undefined,
      docsUrl: '/api/docs/',
    });
  });

  it("takes the operator's contact and guides, as absolute URLs or paths of this service", () => {
    const config = loadConfig({
      ...base,
      API_CONTACT_NAME: 'Acme integrations team',
      API_CONTACT_EMAIL: 'integrations@acme.example',
      API_CONTACT_URL: 'https://acme.example/support',
      API_DOCS_URL: '/guides/',
    });
    expect(config.apiDocument).toEqual({
      contactName: 'Acme integrations team',
      contactEmail: 'integrations@acme.example',
      contactUrl: 'https://acme.example/support',
      docsUrl: '/guides/',
    });
  });

  it('refuses an email that is not one, a protocol-relative or non-http URL, and http in production', () => {
    expect(
      problemsOf({ ...base, API_CONTACT_EMAIL: 'support', API_CONTACT_URL: '//evil.example/', API_DOCS_URL: 'ftp://docs.example/' }),
    ).toEqual([
      'API_CONTACT_EMAIL must be an email address (got "support").',
      'API_CONTACT_URL is not a valid URL.',
      'API_DOCS_URL must be a http:// or https:// URL.',
    ]);
    const production = { ...base, NODE_ENV: 'production', DATABASE_URL: 'postgres://db/app', PUBLIC_BASE_URL: 'https://api.example.com' };
    expect(problemsOf({ ...production, API_DOCS_URL: 'http://docs.example/' })).toEqual(['API_DOCS_URL must be a https:// URL.']);
  });
});

describe('loadConfig: social login', () => {
  const base = { JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY };

  it('configures no provider by default', () => {
    expect(loadConfig(base).socialLogin).toEqual({ google: undefined, facebook: undefined, allowedRedirectUris: [] });
  });

  it('configures a provider from its id and secret, with the real providers as default URLs', () => {
    const { socialLogin } = loadConfig({
      ...base,
      GOOGLE_OAUTH2_CLIENT_ID: 'google-id',
      GOOGLE_OAUTH2_CLIENT_SECRET: 'google-secret',
      FACEBOOK_APP_ID: '123',
      FACEBOOK_APP_SECRET: 'facebook-secret',
      SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: 'https://app.example.com/callback/google , https://APP.example.com/callback/facebook',
    });
    expect(socialLogin).toEqual({
      google: { issuer: 'https://accounts.google.com', clientId: 'google-id', clientSecret: 'google-secret' },
      facebook: {
        appId: '123',
        appSecret: 'facebook-secret',
        dialogUrl: 'https://www.facebook.com',
        graphUrl: 'https://graph.facebook.com',
        graphVersion: 'v25.0',
        trustEmail: false,
      },
      allowedRedirectUris: ['https://app.example.com/callback/google', 'https://app.example.com/callback/facebook'],
    });
  });

  it('refuses half a provider, a bad Graph version and redirect URIs with a query, without echoing secrets', () => {
    const problems = problemsOf({
      ...base,
      GOOGLE_OAUTH2_CLIENT_SECRET: 'only-the-secret',
      FACEBOOK_APP_ID: '123',
      FACEBOOK_APP_SECRET: 'secret',
      FACEBOOK_GRAPH_VERSION: '25',
      SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: 'https://app.example.com/cb?next=/,ftp://x.example/',
    });
    expect(problems).toEqual([
      'GOOGLE_OAUTH2_CLIENT_ID and GOOGLE_OAUTH2_CLIENT_SECRET are set together or not at all.',
      'FACEBOOK_GRAPH_VERSION must look like v25.0 (got "25").',
      expect.stringContaining('SOCIAL_AUTH_ALLOWED_REDIRECT_URIS entries must be absolute'),
      expect.stringContaining('SOCIAL_AUTH_ALLOWED_REDIRECT_URIS entries must be absolute'),
    ]);
    expect(problems.join()).not.toContain('only-the-secret');
  });

  it('requires https provider URLs and redirect URIs in production', () => {
    const problems = problemsOf({
      ...base,
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/app',
      PUBLIC_BASE_URL: 'https://api.example.com',
      GOOGLE_OIDC_ISSUER: 'http://127.0.0.1:8080',
      SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: 'http://app.example.com/callback',
    });
    expect(problems).toEqual([
      'GOOGLE_OIDC_ISSUER must be a https:// URL.',
      expect.stringContaining('SOCIAL_AUTH_ALLOWED_REDIRECT_URIS entries must be absolute https URLs'),
    ]);
  });
});

describe('loadConfig: ad-platform OAuth apps', () => {
  const base = { JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY };

  it('turns a platform on with its app credentials, with the real endpoints and current API versions by default', () => {
    const { adPlatforms, metaGraphUrl } = loadConfig({
      ...base,
      GOOGLE_ADS_CLIENT_ID: 'id',
      GOOGLE_ADS_CLIENT_SECRET: 'secret',
      GOOGLE_ADS_DEVELOPER_TOKEN: 'dev-token',
      META_APP_ID: '42',
      META_APP_SECRET: 'meta-secret',
    });
    expect(adPlatforms).toEqual({
      googleAds: {
        clientId: 'id',
        clientSecret: 'secret',
        developerToken: 'dev-token',
        authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        apiUrl: 'https://googleads.googleapis.com',
        apiVersion: 'v25',
      },
      metaAds: { appId: '42', appSecret: 'meta-secret', dialogUrl: 'https://www.facebook.com/v25.0/dialog/oauth' },
      sweepIntervalSeconds: 300,
    });
    expect(metaGraphUrl).toBe('https://graph.facebook.com/v25.0');
    expect(loadConfig(base).adPlatforms).toMatchObject({ googleAds: undefined, metaAds: undefined });
  });

  it('requires the developer token, refuses retired API versions and half an app, without echoing secrets', () => {
    const problems = problemsOf({
      ...base,
      GOOGLE_ADS_CLIENT_ID: 'id',
      GOOGLE_ADS_CLIENT_SECRET: 'do-not-echo',
      GOOGLE_ADS_API_VERSION: 'v17',
      META_APP_SECRET: 'only-secret',
    });
    expect(problems).toEqual([
      'GOOGLE_ADS_DEVELOPER_TOKEN is required with GOOGLE_ADS_CLIENT_ID (Google Ads API Center).',
      'GOOGLE_ADS_API_VERSION v17 is retired by Google; use v18 or later.',
      'META_APP_ID and META_APP_SECRET are set together or not at all.',
    ]);
    expect(problems.join()).not.toMatch(/do-not-echo|only-secret/);
  });
});

describe('loadConfig: public origin of the OAuth callbacks', () => {
  it('requires PUBLIC_BASE_URL in production once an ad platform is configured', () => {
    const env = {
      NODE_ENV: 'production',
      JWT_SECRET: SECRET,
      ENCRYPTION_KEY: KEY,
      DATABASE_URL: 'postgres://db/app',
      ALLOWED_HOSTS: '.example.com',
      META_APP_ID: '42',
      META_APP_SECRET: 'meta-secret',
    };
    expect(problemsOf(env)).toEqual([
      'PUBLIC_BASE_URL is required when NODE_ENV=production and an ad platform (GOOGLE_ADS_* or META_APP_*) is configured.',
    ]);
    expect(problemsOf({ ...env, PUBLIC_BASE_URL: 'https://api.example.com' })).toEqual([]);
  });
});
