import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const token = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function listen(
  handler: (request: IncomingMessage, body: string, url: URL, response: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => handler(request, body, new URL(request.url ?? '/', 'http://localhost'), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function redirect(response: ServerResponse, location: URL): void {
  response.writeHead(302, { location: location.href });
  response.end();
}

export interface FakeGoogleAds {
  url: string;
  clientId: string;
  clientSecret: string;
  developerToken: string;
  /** Accounts the signed-in Google user reaches. */
  accounts: { id: string; name: string }[];
  /** The consent the user gives at the next authorization: the scopes ticked, or 'deny'. */
  consent: string[] | 'deny';
  /** Every access and refresh token issued, to look for in the database. */
  issued: string[];
  /** Refresh tokens revoked at "Google": refreshing them answers invalid_grant. */
  revoked: Set<string>;
  /** Tokens received on the revocation endpoint. */
  revocations: string[];
  refreshes: number;
  close(): Promise<void>;
}

/**
 * Google's side of a Google Ads connection, over HTTP as documented: the OAuth 2 authorization
 * endpoint (consent given or refused at once, as a signed-in user would; scopes may be narrowed),
 * the token endpoint (authorization code with PKCE and client secret, refresh tokens, OAuth error
 * bodies), the revocation endpoint, and the Google Ads REST API's listAccessibleCustomers and
 * googleAds:search, which require the developer token and a live access token.
 */
export async function startFakeGoogleAds(): Promise<FakeGoogleAds> {
  const codes = new Map<string, { redirectUri: string; challenge: string; scopes: string[] }>();
  const accessTokens = new Set<string>();
  const refreshTokens = new Map<string, string[]>();
  const { server, url } = await listen((request, body, requestUrl, response) => {
    const query = requestUrl.searchParams;
    const path = requestUrl.pathname;
    if (path === '/o/oauth2/v2/auth') {
      const back = new URL(query.get('redirect_uri')!);
      back.searchParams.set('state', query.get('state') ?? '');
      if (
        query.get('client_id') !== fake.clientId ||
        query.get('code_challenge_method') !== 'S256' ||
        query.get('access_type') !== 'offline'
      ) {
        back.searchParams.set('error', 'invalid_request');
      } else if (fake.consent === 'deny') {
        back.searchParams.set('error', 'access_denied');
      } else {
        const code = token('4/0A');
        codes.set(code, { redirectUri: query.get('redirect_uri')!, challenge: query.get('code_challenge') ?? '', scopes: fake.consent });
        back.searchParams.set('code', code);
        back.searchParams.set('scope', fake.consent.join(' '));
      }
      return redirect(response, back);
    }
    if (path === '/token' && request.method === 'POST') {
      const form = new URLSearchParams(body);
      if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret)
        return json(response, 401, { error: 'invalid_client', error_description: 'Unauthorized' });
      if (form.get('grant_type') === 'authorization_code') {
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!grant || grant.redirectUri !== form.get('redirect_uri') || s256(form.get('code_verifier') ?? '') !== grant.challenge)
          return json(response, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
        const access = token('ya29.');
        const refresh = token('1//0g');
        accessTokens.add(access);
        refreshTokens.set(refresh, grant.scopes);
        fake.issued.push(access, refresh);
        return json(response, 200, {
          access_token: access,
          expires_in: 3599,
          refresh_token: refresh,
          scope: grant.scopes.join(' '),
          token_type: 'Bearer',
        });
      }
      if (form.get('grant_type') === 'refresh_token') {
        const refresh = form.get('refresh_token') ?? '';
        const scopes = refreshTokens.get(refresh);
        if (!scopes || fake.revoked.has(refresh))
          return json(response, 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
        fake.refreshes++;
        const access = token('ya29.');
        accessTokens.add(access);
        fake.issued.push(access);
        return json(response, 200, { access_token: access, expires_in: 3599, scope: scopes.join(' '), token_type: 'Bearer' });
      }
      return json(response, 400, { error: 'unsupported_grant_type' });
    }
    if (path === '/revoke' && request.method === 'POST') {
      fake.revocations.push(new URLSearchParams(body).get('token') ?? '');
      return json(response, 200, {});
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (request.headers['developer-token'] !== fake.developerToken)
      return json(response, 401, { error: { code: 401, message: 'The developer token is not valid.', status: 'UNAUTHENTICATED' } });
    if (!bearer || !accessTokens.has(bearer))
      return json(response, 401, {
        error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' },
      });
    if (path === '/v25/customers:listAccessibleCustomers' && request.method === 'GET') {
      return json(response, 200, { resourceNames: fake.accounts.map((account) => `customers/${account.id}`) });
    }
    const search = /^\/v25\/customers\/(\d+)\/googleAds:search$/.exec(path);
    if (search && request.method === 'POST') {
      const account = fake.accounts.find((candidate) => candidate.id === search[1]);
      if (!account) return json(response, 403, { error: { code: 403, status: 'PERMISSION_DENIED' } });
      return json(response, 200, {
        results: [{ customer: { resourceName: `customers/${account.id}`, id: account.id, descriptiveName: account.name } }],
        fieldMask: 'customer.id,customer.descriptiveName',
      });
    }
    json(response, 404, { error: { code: 404, status: 'NOT_FOUND' } });
  });
  const fake: FakeGoogleAds = {
    url,
    clientId: '1234-test.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-test-client-secret',
    developerToken: 'test-developer-token',
    accounts: [],
    consent: [ADWORDS],
    issued: [],
    revoked: new Set(),
    revocations: [],
    refreshes: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return fake;
}

export interface FakeMetaAds {
  url: string;
  appId: string;
  appSecret: string;
  accounts: { account_id: string; name: string }[];
  /** Permissions the person grants at the next dialog, or 'deny'. */
  consent: string[] | 'deny';
  issued: string[];
  /** Makes every token dead (Graph then answers error 190 with this subcode); undefined revives them. */
  killTokens(subcode: number | undefined): void;
  exchanges: number;
  close(): Promise<void>;
}

/**
 * Meta's side of a Meta Ads connection: the login dialog, `oauth/access_token` for the code (client
 * secret, redirect URI, PKCE) and for `fb_exchange_token` (long-lived, ~60 days), `me/permissions`
 * and `me/adaccounts`, both requiring `appsecret_proof`. Errors have Graph's shape.
 */
export async function startFakeMetaAds(): Promise<FakeMetaAds> {
  const codes = new Map<string, { redirectUri: string; challenge: string; scopes: string[] }>();
  const tokens = new Map<string, string[]>();
  let dead: number | undefined;
  const graphError = (response: ServerResponse, code: number, message: string, subcode?: number) =>
    json(response, 400, {
      error: { message, type: 'OAuthException', code, ...(subcode !== undefined && { error_subcode: subcode }), fbtrace_id: 'A1b2C3' },
    });
  const { server, url } = await listen((_request, _body, requestUrl, response) => {
    const query = requestUrl.searchParams;
    const path = requestUrl.pathname;
    if (path === '/v25.0/dialog/oauth') {
      const back = new URL(query.get('redirect_uri')!);
      back.searchParams.set('state', query.get('state') ?? '');
      if (fake.consent === 'deny') {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_reason', 'user_denied');
        back.searchParams.set('error_description', 'Permissions error');
      } else {
        const code = token('AQ');
        codes.set(code, { redirectUri: query.get('redirect_uri')!, challenge: query.get('code_challenge') ?? '', scopes: fake.consent });
        back.searchParams.set('code', code);
      }
      return redirect(response, back);
    }
    if (path === '/v25.0/oauth/access_token') {
      if (query.get('client_id') !== fake.appId || query.get('client_secret') !== fake.appSecret)
        return graphError(response, 1, 'Error validating client secret.');
      if (query.get('grant_type') === 'fb_exchange_token') {
        const current = query.get('fb_exchange_token') ?? '';
        const scopes = tokens.get(current);
        if (!scopes) return graphError(response, 190, 'Invalid OAuth access token.');
        if (dead !== undefined) return graphError(response, 190, 'Error validating access token.', dead);
        fake.exchanges++;
        const longLived = token('EAAL');
        tokens.set(longLived, scopes);
        fake.issued.push(longLived);
        return json(response, 200, { access_token: longLived, token_type: 'bearer', expires_in: 5183944 });
      }
      const grant = codes.get(query.get('code') ?? '');
      codes.delete(query.get('code') ?? '');
      if (!grant || grant.redirectUri !== query.get('redirect_uri') || s256(query.get('code_verifier') ?? '') !== grant.challenge)
        return graphError(response, 100, 'Invalid verification code format.');
      const shortLived = token('EAAS');
      tokens.set(shortLived, grant.scopes);
      fake.issued.push(shortLived);
      return json(response, 200, { access_token: shortLived, token_type: 'bearer', expires_in: 5400 });
    }
    const accessToken = query.get('access_token') ?? '';
    const scopes = tokens.get(accessToken);
    if (!scopes) return graphError(response, 190, 'Invalid OAuth access token.');
    if (dead !== undefined) return graphError(response, 190, 'Error validating access token.', dead);
    if (query.get('appsecret_proof') !== createHmac('sha256', fake.appSecret).update(accessToken).digest('hex'))
      return graphError(response, 100, 'Invalid appsecret_proof provided in the API argument');
    if (path === '/v25.0/me/permissions')
      return json(response, 200, { data: scopes.map((permission) => ({ permission, status: 'granted' })) });
    if (path === '/v25.0/me/adaccounts') {
      return json(response, 200, {
        data: fake.accounts.map((account) => ({ ...account, account_status: 1, id: `act_${account.account_id}` })),
        paging: { cursors: { before: 'QVFIUk', after: 'QVFIUl' } },
      });
    }
    graphError(response, 2500, 'Unknown path components');
  });
  const fake: FakeMetaAds = {
    url,
    appId: '987654321098765',
    appSecret: 'meta-app-secret-for-tests',
    accounts: [],
    consent: ['ads_management', 'ads_read'],
    issued: [],
    killTokens: (subcode: number | undefined) => {
      dead = subcode;
    },
    exchanges: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return fake;
}
