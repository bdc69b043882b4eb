import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import type { StoredTokens } from './connections.repository.js';
import { ProviderRevoker } from './provider-revoker.js';
import { TokenCipher } from './token-cipher.js';

const ACCESS = 'ya29.access-token-that-must-never-be-logged';
const REFRESH = '1//refresh-token-that-must-never-be-logged';
const cipher = new TokenCipher(Buffer.alloc(32, 5));

interface Recorded {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

describe('ProviderRevoker', () => {
  let server: Server;
  let base: string;
  let mode: 'ok' | 'error' | 'hang' = 'ok';
  const requests: Recorded[] = [];
  const logLines: string[] = [];
  let revoker: ProviderRevoker;
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        requests.push({ method: request.method!, url: request.url!, contentType: request.headers['content-type'], body });
        if (mode === 'hang') return;
        if (mode === 'error') {
          response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"backend_error"}');
          return;
        }
        const answer = request.url!.startsWith('/revoke') ? {} : { success: true };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = { googleOauthRevokeUrl: `${base}/revoke`, metaGraphUrl: `${base}/v19.0`, providerTimeoutMs: 5000 } as AppConfig;
    revoker = new ProviderRevoker(config, cipher, logger);
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    mode = 'ok';
    requests.length = 0;
  });

  afterEach(() => {
    for (const line of logLines) {
      expect(line).not.toContain(ACCESS);
      expect(line).not.toContain(REFRESH);
      expect(line).not.toContain('access_token');
    }
  });

  const tokens = (access: string | null, refresh: string | null): StoredTokens => ({
    accessToken: access === null ? null : cipher.encrypt(access),
    refreshToken: refresh === null ? null : cipher.encrypt(refresh),
  });
  const google = { id: 1, customerId: 9, platform: 'google_ads' as const };
  const meta = { id: 2, customerId: 9, platform: 'meta_ads' as const };

  it('revokes a Google grant by POSTing its refresh token as a form', async () => {
    expect(await revoker.revoke(google, tokens(ACCESS, REFRESH))).toBe('revoked');
    expect(requests).toEqual([
      {
        method: 'POST',
        url: '/revoke',
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams({ token: REFRESH }).toString(),
      },
    ]);
  });

  it('falls back to the access token for Google when there is no refresh token', async () => {
    expect(await revoker.revoke(google, tokens(ACCESS, null))).toBe('revoked');
    expect(new URLSearchParams(requests[0]!.body).get('token')).toBe(ACCESS);
  });

  it('revokes a Meta grant with DELETE /me/permissions and the access token', async () => {
    expect(await revoker.revoke(meta, tokens(ACCESS, null))).toBe('revoked');
    expect(requests).toHaveLength(1);
    const url = new URL(requests[0]!.url, base);
    expect(requests[0]!.method).toBe('DELETE');
    expect(url.pathname).toBe('/v19.0/me/permissions');
    expect(url.searchParams.get('access_token')).toBe(ACCESS);
  });

  it('skips a connection without a stored token', async () => {
    expect(await revoker.revoke(google, tokens(null, null))).toBe('skipped');
    expect(await revoker.revoke(meta, tokens(null, REFRESH))).toBe('skipped');
    expect(requests).toEqual([]);
  });

  it('reports a provider error as a failure, logging the status but no token', async () => {
    mode = 'error';
    logLines.length = 0;
    expect(await revoker.revoke(meta, tokens(ACCESS, null))).toBe('failed');
    expect(logLines.join('')).toContain('"provider_status":500');
  });

  it('gives up after the timeout', async () => {
    mode = 'hang';
    logLines.length = 0;
    // Its own short limit: the shared revoker's is generous so a loaded test machine cannot fail the others.
    const impatient = new ProviderRevoker({ googleOauthRevokeUrl: `${base}/revoke`, providerTimeoutMs: 150 } as AppConfig, cipher, logger);
    const started = Date.now();
    expect(await impatient.revoke(google, tokens(ACCESS, REFRESH))).toBe('failed');
    expect(Date.now() - started).toBeLessThan(4000);
    expect(logLines.join('')).toContain('"reason":"timeout"');
  });

  it('reports an unreachable provider as a failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const config = { googleOauthRevokeUrl: `http://127.0.0.1:${port}/revoke`, providerTimeoutMs: 5000 } as AppConfig;
    logLines.length = 0;
    const unreachable = new ProviderRevoker(config, cipher, logger);
    expect(await unreachable.revoke(google, tokens(ACCESS, REFRESH))).toBe('failed');
    expect(logLines.join('')).toContain('"reason":"network_error"');
  });

  it('does not call the provider with a token it cannot decrypt', async () => {
    const foreign = new TokenCipher(Buffer.alloc(32, 6)).encrypt(REFRESH);
    logLines.length = 0;
    expect(await revoker.revoke(google, { accessToken: null, refreshToken: foreign })).toBe('failed');
    expect(requests).toEqual([]);
    expect(logLines.join('')).toContain('"reason":"token_not_decryptable"');
  });
});
