import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      PROVIDER_TIMEOUT_MS: '250',
    });
    expect(config.encryptionPreviousKeys.map((key) => key.toString('hex'))).toEqual(previous.map((key) => key.toString('hex')));
    expect(config.googleOauthRevokeUrl).toBe('http://127.0.0.1:9999/revoke');
    expect(config.metaGraphUrl).toBe('http://127.0.0.1:9999/v19.0');
    expect(config.providerTimeoutMs).toBe(250);
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
