import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const DATAMANAGER = 'https://www.googleapis.com/auth/datamanager';
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
  /**
   * The consent the user gives at the next authorization: the scopes they leave ticked (default
   * adwords and datamanager), or 'deny'. The grant holds the requested scopes that are ticked.
   */
  consent: string[] | 'deny';
  /** The query of every authorization request, newest last: what the app asked for. */
  authorizations: URLSearchParams[];
  /** Every access and refresh token issued, to look for in the database. */
  issued: string[];
  /** Refresh tokens revoked at "Google": refreshing them answers invalid_grant. */
  revoked: Set<string>;
  /** Tokens received on the revocation endpoint. */
  revocations: string[];
  refreshes: number;
  /** The Data Manager API on the same origin (GOOGLE_DATA_MANAGER_URL = url). */
  dataManager: FakeDataManager;
  /** Its `events:ingest` (signal events, SPEC 10.4). */
  events: FakeEventsIngest;
  /** An access token as a grant with these scopes would give (default: adwords and datamanager), without the OAuth dance. */
  issueAccessToken(scopes?: string[]): string;
  /** The access token stops working at once (401), as after the user revoked the grant. */
  revokeAccessToken(accessToken: string): void;
  close(): Promise<void>;
}

/**
 * Google's side of a Google Ads connection, over HTTP as documented: the OAuth 2 authorization
 * endpoint (consent given or refused at once, as a signed-in user would; the person may untick
 * requested scopes, as Google's granular consent screen allows, and each consent is a grant of its
 * own: scopes granted earlier are not carried over, as after the person removed the app),
 * the token endpoint (authorization code with PKCE and client secret, refresh tokens, OAuth error
 * bodies), the revocation endpoint, and the Google Ads REST API's listAccessibleCustomers and
 * googleAds:search, which require the developer token and a live access token.
 */
export async function startFakeGoogleAds(): Promise<FakeGoogleAds> {
  const codes = new Map<string, { redirectUri: string; challenge: string; scopes: string[] }>();
  /** Live access tokens and the scopes each carries. */
  const accessTokens = new Map<string, string[]>();
  const refreshTokens = new Map<string, string[]>();
  const dataManager = createFakeDataManager(() => fake.accounts.map((account) => account.id));
  const events = createFakeEventsIngest(() => fake.accounts.map((account) => account.id));
  const { server, url } = await listen((request, body, requestUrl, response) => {
    const query = requestUrl.searchParams;
    const path = requestUrl.pathname;
    if (path.startsWith('/v1/')) {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      // Signal events (SPEC 10.4): the events:ingest route of the same API.
      if (path === '/v1/events:ingest')
        return events.handle(request.method ?? 'GET', body, bearer === undefined ? undefined : accessTokens.get(bearer), response);
      return dataManager.handle(
        request.method ?? 'GET',
        requestUrl,
        body,
        bearer === undefined ? undefined : accessTokens.get(bearer),
        response,
      );
    }
    if (path === '/o/oauth2/v2/auth') {
      fake.authorizations.push(new URLSearchParams(query));
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
        const ticked = fake.consent;
        const scopes = (query.get('scope') ?? '').split(' ').filter((scope) => scope !== '' && ticked.includes(scope));
        const code = token('4/0A');
        codes.set(code, { redirectUri: query.get('redirect_uri')!, challenge: query.get('code_challenge') ?? '', scopes });
        back.searchParams.set('code', code);
        back.searchParams.set('scope', scopes.join(' '));
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
        accessTokens.set(access, grant.scopes);
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
        accessTokens.set(access, scopes);
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
    consent: [ADWORDS, DATAMANAGER],
    authorizations: [],
    issued: [],
    revoked: new Set(),
    revocations: [],
    refreshes: 0,
    dataManager,
    events,
    issueAccessToken: (scopes = [ADWORDS, DATAMANAGER]) => {
      const access = token('ya29.');
      accessTokens.set(access, scopes);
      return access;
    },
    revokeAccessToken: (accessToken: string) => {
      accessTokens.delete(accessToken);
    },
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
  /** Customer-file custom audiences on the same Graph (META_GRAPH_URL = `${url}/v25.0`). */
  customAudiences: FakeCustomAudiences;
  /** The Conversions API on the same Graph (signal events, SPEC 10.4). */
  conversions: FakeConversions;
  /** A long-lived user token with these permissions, without the login dialog. */
  issueAccessToken(scopes?: string[]): string;
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
  const customAudiences = createFakeCustomAudiences(() => fake.accounts.map((account) => account.account_id));
  const conversions = createFakeConversions();
  const { server, url } = await listen((request, body, requestUrl, response) => {
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
    // Signal events (SPEC 10.4): the Conversions API on the same Graph.
    if (conversions.handle(request.method ?? 'GET', requestUrl, body, scopes, response)) return;
    if (customAudiences.handle(request.method ?? 'GET', requestUrl, body, request.headers['content-type'] ?? '', scopes, response)) return;
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
    customAudiences,
    conversions,
    issueAccessToken: (scopes = ['ads_management', 'ads_read']) => {
      const longLived = token('EAAL');
      tokens.set(longLived, scopes);
      fake.issued.push(longLived);
      return longLived;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return fake;
}

/** A fault the next matching call answers with instead of its normal answer. */
export type FakeDataManagerFault =
  | { kind: 'rate_limited'; retryAfterSeconds?: number }
  | { kind: 'server_error'; status?: number; retryAfterSeconds?: number }
  | { kind: 'unauthenticated' }
  | { kind: 'scope_missing' }
  | { kind: 'concurrent_modification' };

export type FakeDataManagerRoute = 'ingest' | 'remove' | 'status' | 'userLists';

export interface FakeUserList {
  id: string;
  accountId: string;
  displayName: string;
  description: string | undefined;
  membershipStatus: string;
  uploadKeyTypes: string[];
  dataSourceType: string | undefined;
  /** Members as the list holds them: one entry per member, keyed by its identifiers. */
  members: Map<string, FakeAudienceMember>;
}

export interface FakeAudienceMember {
  userData: { userIdentifiers: Record<string, unknown>[] };
  consent?: { adUserData?: string; adPersonalization?: string };
}

/** An accepted ingest or remove, as received. */
export interface FakeDataManagerRequest {
  operation: 'ingest' | 'remove';
  requestId: string;
  userListId: string;
  operatingAccountId: string;
  loginAccountId: string | undefined;
  encoding: string;
  termsOfService: unknown;
  members: FakeAudienceMember[];
}

export interface FakeRequestVerdict {
  requestStatus: 'PROCESSING' | 'SUCCESS' | 'PARTIAL_SUCCESS' | 'FAILED';
  errorCounts?: { reason: string; recordCount: number }[];
}

export interface FakeDataManager {
  userLists: Map<string, FakeUserList>;
  /** Every ingest and remove the fake accepted, in order. */
  requests: FakeDataManagerRequest[];
  /** Every call that reached a Data Manager route, refused or not. */
  calls: { route: FakeDataManagerRoute | 'unknown'; status: number }[];
  /** The match rate user lists report once they have members. */
  matchRatePercentage: number;
  /** The next `times` calls to `route` (any route when unset) answer with the fault. */
  failNext(fault: FakeDataManagerFault, options?: { times?: number; route?: FakeDataManagerRoute }): void;
  /** What requestStatus:retrieve answers for a request (default: SUCCESS with its member count). */
  setVerdict(requestId: string, verdict: FakeRequestVerdict): void;
  /**
   * The next `times` accepted requests of `operation` fail whole after acceptance, as Google may:
   * their verdict is FAILED and their members are not applied to the list.
   */
  failNextAccepted(operation: 'ingest' | 'remove', times?: number): void;
  handle(method: string, url: URL, body: string, scopes: string[] | undefined, response: ServerResponse): void;
}

const HEX_64 = /^[0-9a-f]{64}$/;
const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * The Data Manager API's audience side as its v1 reference documents it
 * (developers.google.com/data-manager/api/reference/rest/v1): user lists under
 * `accountTypes/GOOGLE_ADS/accounts/{id}/userLists`, `audienceMembers:ingest` and `:remove`, and
 * `requestStatus:retrieve`. It checks what Google checks before accepting a request whole: a live
 * token with the `datamanager` scope (401, or 403 ACCESS_TOKEN_SCOPE_INSUFFICIENT), the
 * destination and its list, ≤ 10,000 members, 1–10 identifiers each, `encoding` and every hash in it
 * (so a raw email fails), the address parts, consent enums, and accepted Customer Match terms on
 * ingest. Errors are google.rpc.Status with ErrorInfo and BadRequest details.
 */
function createFakeDataManager(accountIds: () => string[]): FakeDataManager {
  const faults: { fault: FakeDataManagerFault; route: FakeDataManagerRoute | undefined; times: number }[] = [];
  const verdicts = new Map<string, FakeRequestVerdict>();
  const failingAccepted = { ingest: 0, remove: 0 };
  let nextListId = 7_000_000_001;

  const rpcError = (
    response: ServerResponse,
    status: number,
    rpcStatus: string,
    message: string,
    reason?: string,
    field?: string,
    headers: Record<string, string> = {},
  ) => {
    const details: unknown[] = [];
    if (reason)
      details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'datamanager.googleapis.com', metadata: {} });
    if (field)
      details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: message, reason }] });
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    response.end(JSON.stringify({ error: { code: status, message, status: rpcStatus, details } }));
  };
  const invalid = (response: ServerResponse, message: string, reason: string, field: string) =>
    rpcError(response, 400, 'INVALID_ARGUMENT', message, reason, field);

  const userListJson = (list: FakeUserList) => ({
    name: `accountTypes/GOOGLE_ADS/accounts/${list.accountId}/userLists/${list.id}`,
    id: list.id,
    displayName: list.displayName,
    ...(list.description !== undefined && { description: list.description }),
    membershipStatus: list.membershipStatus,
    accessReason: 'OWNED',
    readOnly: false,
    ingestedUserListInfo: {
      uploadKeyTypes: list.uploadKeyTypes,
      contactIdInfo: {
        ...(list.dataSourceType !== undefined && { dataSourceType: list.dataSourceType }),
        matchRatePercentage: list.members.size > 0 ? fake.matchRatePercentage : 0,
      },
    },
    sizeInfo: { displayNetworkMembersCount: String(list.members.size), searchNetworkMembersCount: String(list.members.size) },
  });

  /** Why a member is not one Google takes, as [message, reason, field], or undefined. */
  const memberProblem = (member: unknown, index: number, encoding: string): [string, string, string] | undefined => {
    const field = `audience_members[${index}]`;
    const userData = (member as FakeAudienceMember | null)?.userData;
    const identifiers = userData?.userIdentifiers;
    if (!Array.isArray(identifiers) || identifiers.length === 0)
      return ['At least one user identifier is required.', 'REQUIRED_FIELD_MISSING', `${field}.user_data.user_identifiers`];
    if (identifiers.length > 10) return ['Too many user identifiers.', 'TOO_MANY_USER_IDENTIFIERS', `${field}.user_data.user_identifiers`];
    const hashed = encoding === 'HEX' ? HEX_64 : BASE64_SHA256;
    const badHash = encoding === 'HEX' ? 'INVALID_HEX_ENCODING' : 'INVALID_BASE64_ENCODING';
    for (const [position, identifier] of identifiers.entries()) {
      const at = `${field}.user_data.user_identifiers[${position}]`;
      const keys = Object.keys(identifier ?? {});
      if (keys.length !== 1) return ['Exactly one identifier per user identifier.', 'INVALID_AUDIENCE_MEMBER', at];
      const { emailAddress, phoneNumber, address } = identifier as Record<string, unknown>;
      if (emailAddress !== undefined && (typeof emailAddress !== 'string' || !hashed.test(emailAddress)))
        return ['The email address is not a SHA-256 hash in the request encoding.', badHash, `${at}.email_address`];
      if (phoneNumber !== undefined && (typeof phoneNumber !== 'string' || !hashed.test(phoneNumber)))
        return ['The phone number is not a SHA-256 hash in the request encoding.', badHash, `${at}.phone_number`];
      if (address !== undefined) {
        const parts = (address ?? {}) as Record<string, unknown>;
        for (const name of ['givenName', 'familyName'])
          if (typeof parts[name] !== 'string' || !hashed.test(parts[name] as string))
            return ['The name is not a SHA-256 hash in the request encoding.', badHash, `${at}.address.${name}`];
        if (typeof parts.regionCode !== 'string' || !/^[A-Z]{2}$/.test(parts.regionCode))
          return ['The region code is not valid.', 'INVALID_COUNTRY_CODE', `${at}.address.region_code`];
        if (typeof parts.postalCode !== 'string' || parts.postalCode.trim() === '')
          return ['The postal code is not valid.', 'INVALID_POSTAL_CODE', `${at}.address.postal_code`];
      }
      if (!['emailAddress', 'phoneNumber', 'address'].includes(keys[0]!))
        return ['Unknown user identifier.', 'INVALID_AUDIENCE_MEMBER', at];
    }
    const consent = (member as FakeAudienceMember).consent;
    const statuses = ['CONSENT_GRANTED', 'CONSENT_DENIED', 'CONSENT_STATUS_UNSPECIFIED'];
    if (consent !== undefined)
      for (const name of ['adUserData', 'adPersonalization'] as const)
        if (consent[name] !== undefined && !statuses.includes(consent[name]))
          return ['The consent value is not valid.', 'INVALID_ENUM_VALUE', `${field}.consent.${name}`];
    return undefined;
  };

  const memberKey = (member: FakeAudienceMember) => member.userData.userIdentifiers.map((identifier) => JSON.stringify(identifier)).sort();

  const fake: FakeDataManager = {
    userLists: new Map(),
    requests: [],
    calls: [],
    matchRatePercentage: 62,
    failNext: (fault, options = {}) => faults.push({ fault, route: options.route, times: options.times ?? 1 }),
    setVerdict: (requestId, verdict) => verdicts.set(requestId, verdict),
    failNextAccepted: (operation, times = 1) => {
      failingAccepted[operation] += times;
    },
    handle: (method, url, body, scopes, response) => {
      const path = url.pathname;
      const listPath = /^\/v1\/accountTypes\/GOOGLE_ADS\/accounts\/(\d+)\/userLists(?:\/(\d+))?$/.exec(path);
      const route: FakeDataManagerRoute | 'unknown' =
        path === '/v1/audienceMembers:ingest' && method === 'POST'
          ? 'ingest'
          : path === '/v1/audienceMembers:remove' && method === 'POST'
            ? 'remove'
            : path === '/v1/requestStatus:retrieve' && method === 'GET'
              ? 'status'
              : listPath
                ? 'userLists'
                : 'unknown';
      const original = response.writeHead.bind(response);
      response.writeHead = ((status: number, ...rest: unknown[]) => {
        fake.calls.push({ route, status });
        return (original as (...args: unknown[]) => ServerResponse)(status, ...rest);
      }) as typeof response.writeHead;

      if (scopes === undefined)
        return rpcError(response, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', undefined, undefined, {
          'www-authenticate': 'Bearer realm="https://accounts.google.com/"',
        });
      if (!scopes.includes(DATAMANAGER))
        return rpcError(
          response,
          403,
          'PERMISSION_DENIED',
          'Request had insufficient authentication scopes.',
          'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
          undefined,
          {
            'www-authenticate': `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="${DATAMANAGER}"`,
          },
        );
      const pending = faults.find((entry) => entry.route === undefined || entry.route === route);
      if (pending && route !== 'unknown') {
        if (--pending.times <= 0) faults.splice(faults.indexOf(pending), 1);
        const { fault } = pending;
        if (fault.kind === 'rate_limited')
          return rpcError(response, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric.', 'RATE_LIMIT_EXCEEDED', undefined, {
            ...(fault.retryAfterSeconds !== undefined && { 'retry-after': String(fault.retryAfterSeconds) }),
          });
        if (fault.kind === 'server_error')
          return rpcError(
            response,
            fault.status ?? 503,
            fault.status === 500 ? 'INTERNAL' : 'UNAVAILABLE',
            'The service is currently unavailable.',
            undefined,
            undefined,
            {
              ...(fault.retryAfterSeconds !== undefined && { 'retry-after': String(fault.retryAfterSeconds) }),
            },
          );
        if (fault.kind === 'unauthenticated')
          return rpcError(response, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
        if (fault.kind === 'scope_missing')
          return rpcError(
            response,
            403,
            'PERMISSION_DENIED',
            'Request had insufficient authentication scopes.',
            'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
          );
        return rpcError(
          response,
          409,
          'ABORTED',
          'Multiple requests were attempting to modify the same user list.',
          'CONCURRENT_MODIFICATION',
        );
      }

      if (route === 'status') {
        const requestId = url.searchParams.get('requestId') ?? '';
        const accepted = fake.requests.find((request) => request.requestId === requestId);
        if (!accepted) return invalid(response, 'The request ID is not valid.', 'INVALID_REQUEST_ID', 'request_id');
        const verdict = verdicts.get(requestId) ?? { requestStatus: 'SUCCESS' };
        const records = String(accepted.members.length);
        const identifiers = String(accepted.members.reduce((sum, member) => sum + member.userData.userIdentifiers.length, 0));
        return json(response, 200, {
          requestStatusPerDestination: [
            {
              destination: {
                operatingAccount: { accountType: 'GOOGLE_ADS', accountId: accepted.operatingAccountId },
                productDestinationId: accepted.userListId,
              },
              requestStatus: verdict.requestStatus,
              ...(verdict.errorCounts && {
                errorInfo: {
                  errorCounts: verdict.errorCounts.map((entry) => ({ reason: entry.reason, recordCount: String(entry.recordCount) })),
                },
              }),
              ...(verdict.requestStatus !== 'PROCESSING' &&
                (accepted.operation === 'ingest'
                  ? {
                      audienceMembersIngestionStatus: {
                        userDataIngestionStatus: {
                          recordCount: records,
                          userIdentifierCount: identifiers,
                          uploadMatchRateRange: 'MATCH_RATE_RANGE_51_TO_60',
                        },
                      },
                    }
                  : {
                      audienceMembersRemovalStatus: { userDataRemovalStatus: { recordCount: records, userIdentifierCount: identifiers } },
                    })),
            },
          ],
        });
      }

      let parsed: Record<string, unknown> = {};
      if (method === 'POST') {
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          return invalid(response, 'Invalid JSON payload received.', 'INVALID_FORMAT', '');
        }
      }

      if (route === 'userLists') {
        const [, accountId, listId] = listPath!;
        if (!accountIds().includes(accountId!))
          return rpcError(response, 403, 'PERMISSION_DENIED', 'The caller does not have permission.', 'PERMISSION_DENIED');
        if (method === 'GET' && listId) {
          const list = fake.userLists.get(listId);
          if (!list || list.accountId !== accountId)
            return rpcError(response, 404, 'NOT_FOUND', 'Requested entity was not found.', 'NOT_FOUND');
          return json(response, 200, userListJson(list));
        }
        if (method !== 'POST' || listId) return rpcError(response, 404, 'NOT_FOUND', 'Requested entity was not found.');
        if (typeof parsed.displayName !== 'string' || parsed.displayName.trim() === '')
          return invalid(response, 'The display name is required.', 'REQUIRED_FIELD_MISSING', 'user_list.display_name');
        const info = (parsed.ingestedUserListInfo ?? {}) as Record<string, unknown>;
        const keyTypes = Array.isArray(info.uploadKeyTypes) ? (info.uploadKeyTypes as string[]) : [];
        if (keyTypes.length === 0)
          return invalid(
            response,
            'Upload key types are required.',
            'REQUIRED_FIELD_MISSING',
            'user_list.ingested_user_list_info.upload_key_types',
          );
        if (typeof parsed.membershipDuration === 'string' && !/^\d+s$/.test(parsed.membershipDuration))
          return invalid(response, 'The membership duration is not valid.', 'INVALID_FORMAT', 'user_list.membership_duration');
        if (typeof parsed.membershipDuration === 'string' && Number(parsed.membershipDuration.slice(0, -1)) % 86_400 !== 0)
          return invalid(
            response,
            'The membership duration is not a whole number of days.',
            'INVALID_ARGUMENT',
            'user_list.membership_duration',
          );
        const list: FakeUserList = {
          id: String(nextListId++),
          accountId: accountId!,
          displayName: parsed.displayName,
          description: typeof parsed.description === 'string' ? parsed.description : undefined,
          membershipStatus: typeof parsed.membershipStatus === 'string' ? parsed.membershipStatus : 'OPEN',
          uploadKeyTypes: keyTypes,
          dataSourceType: ((info.contactIdInfo ?? {}) as Record<string, string>).dataSourceType,
          members: new Map(),
        };
        fake.userLists.set(list.id, list);
        return json(response, 200, userListJson(list));
      }

      if (route === 'ingest' || route === 'remove') {
        const destinations = parsed.destinations;
        if (!Array.isArray(destinations) || destinations.length === 0)
          return invalid(response, 'At least one destination is required.', 'REQUIRED_FIELD_MISSING', 'destinations');
        if (destinations.length > 10) return invalid(response, 'Too many destinations.', 'TOO_MANY_DESTINATIONS', 'destinations');
        const destination = destinations[0] as Record<string, Record<string, unknown>>;
        const operating = destination.operatingAccount ?? {};
        const accountId = String(operating.accountId ?? '');
        if ((operating.accountType ?? operating.product) !== 'GOOGLE_ADS' || !/^\d+$/.test(accountId))
          return invalid(response, 'The destination is not valid.', 'INVALID_DESTINATION', 'destinations[0].operating_account');
        if (!accountIds().includes(accountId))
          return rpcError(response, 403, 'PERMISSION_DENIED', 'The caller does not have permission.', 'PERMISSION_DENIED');
        const list = fake.userLists.get(String(destination.productDestinationId ?? ''));
        if (!list || list.accountId !== accountId)
          return invalid(response, 'The user list is not valid.', 'INVALID_USER_LIST_ID', 'destinations[0].product_destination_id');
        const members = parsed.audienceMembers;
        if (!Array.isArray(members) || members.length === 0)
          return invalid(response, 'At least one audience member is required.', 'REQUIRED_FIELD_MISSING', 'audience_members');
        if (members.length > 10_000)
          return invalid(response, 'Too many audience members.', 'TOO_MANY_AUDIENCE_MEMBERS', 'audience_members');
        const encoding = parsed.encoding;
        if (encoding !== 'HEX' && encoding !== 'BASE64')
          return invalid(response, 'The encoding is required for user data.', 'INVALID_ENUM_VALUE', 'encoding');
        const terms = (parsed.termsOfService ?? {}) as Record<string, unknown>;
        if (route === 'ingest' && terms.customerMatchTermsOfServiceStatus !== 'ACCEPTED')
          return invalid(
            response,
            'The Customer Match terms of service must be accepted.',
            'TERMS_AND_CONDITIONS_NOT_SIGNED',
            'terms_of_service',
          );
        for (const [index, member] of members.entries()) {
          const problem = memberProblem(member, index, encoding);
          if (problem) return invalid(response, ...problem);
        }
        const requestId = randomBytes(16).toString('hex');
        const login = destination.loginAccount as Record<string, unknown> | undefined;
        fake.requests.push({
          operation: route,
          requestId,
          userListId: list.id,
          operatingAccountId: accountId,
          loginAccountId: login ? String(login.accountId) : undefined,
          encoding,
          termsOfService: parsed.termsOfService,
          members: members as FakeAudienceMember[],
        });
        if (failingAccepted[route] > 0) {
          failingAccepted[route]--;
          verdicts.set(requestId, { requestStatus: 'FAILED' });
          return json(response, 200, { requestId });
        }
        for (const member of members as FakeAudienceMember[]) {
          const keys = memberKey(member);
          if (route === 'ingest') list.members.set(keys.join('|'), member);
          else for (const [stored] of list.members) if (keys.some((key) => stored.split('|').includes(key))) list.members.delete(stored);
        }
        return json(response, 200, { requestId });
      }
      rpcError(response, 404, 'NOT_FOUND', 'Method not found.');
    },
  };
  return fake;
}

/** A Graph error answer, as Meta writes one (`error.code`, `error_subcode`, `fbtrace_id`); true, for the router. */
function graphError(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
  subcode?: number,
  headers: Record<string, string> = {},
): true {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(
    JSON.stringify({
      error: {
        message,
        type: 'OAuthException',
        code,
        ...(subcode !== undefined && { error_subcode: subcode }),
        is_transient: false,
        fbtrace_id: 'AFake',
      },
    }),
  );
  return true;
}

/**
 * The app's settings for both fakes: Google's OAuth, Ads and Data Manager endpoints, and Meta's
 * dialog and Graph (what a test of syncs or connections points the app at).
 */
export function fakePlatformsEnv(google: FakeGoogleAds, meta: FakeMetaAds): Record<string, string> {
  return {
    GOOGLE_ADS_CLIENT_ID: google.clientId,
    GOOGLE_ADS_CLIENT_SECRET: google.clientSecret,
    GOOGLE_ADS_DEVELOPER_TOKEN: google.developerToken,
    GOOGLE_ADS_AUTHORIZATION_URL: `${google.url}/o/oauth2/v2/auth`,
    GOOGLE_ADS_TOKEN_URL: `${google.url}/token`,
    GOOGLE_ADS_API_URL: google.url,
    GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
    GOOGLE_DATA_MANAGER_URL: google.url,
    META_APP_ID: meta.appId,
    META_APP_SECRET: meta.appSecret,
    META_DIALOG_URL: `${meta.url}/v25.0/dialog/oauth`,
    META_GRAPH_URL: `${meta.url}/v25.0`,
  };
}

/** A Graph error the next matching custom-audience call answers with. */
export interface FakeGraphFault {
  code: number;
  subcode?: number;
  /** HTTP status; Graph answers most errors with 400, whatever the code. */
  status?: number;
  message?: string;
  /** Sent as `x-business-use-case-usage`'s `estimated_time_to_regain_access`. */
  regainAccessMinutes?: number;
}

export type FakeCustomAudienceRoute = 'create' | 'get' | 'users';

export interface FakeCustomAudience {
  id: string;
  accountId: string;
  name: string;
  description: string | undefined;
  subtype: string;
  customerFileSource: string;
  /** Rows held, each as `KEY=value` pairs of its non-empty keys. */
  rows: Set<string>;
  flagged: boolean;
}

/** One members request, as received and judged. */
export interface FakeUsersRequest {
  method: 'POST' | 'DELETE';
  audienceId: string;
  bytes: number;
  session: { session_id: number; batch_seq: number; last_batch_flag: boolean; estimated_num_total?: number };
  schema: string[];
  data: string[][];
  invalidEntries: number;
}

export interface FakeCustomAudiences {
  audiences: Map<string, FakeCustomAudience>;
  /** Every members request the fake accepted, in order. */
  requests: FakeUsersRequest[];
  /** Sessions by id: whether closed by `last_batch_flag`, and the last batch_seq taken. */
  sessions: Map<number, { audienceId: string; method: string; schema: string; lastSeq: number; closed: boolean; received: number }>;
  /** Larger bodies are refused with 413 (Meta documents none; about 65,000 bytes fail in practice). */
  maxBodyBytes: number;
  /** A removal that would leave fewer rows than this is refused 200/1870047 "Audience Size too Low" (0: never). */
  minimumSizeAfterRemoval: number;
  /** Share of rows Meta "matches", for the approximate counts. */
  matchRate: number;
  termsAccepted: boolean;
  /** Milliseconds a members request is held after it is taken and before it is answered (a slow platform). */
  usersDelayMs: number;
  /** Members requests taken and not yet answered, now and at most, per audience: one sync per destination at a time shows here. */
  inFlight: Map<string, { now: number; most: number }>;
  failNext(fault: FakeGraphFault, options?: { times?: number; route?: FakeCustomAudienceRoute }): void;
  /** `operation_status` 471: member updates then fail with 100/1713230. */
  flag(audienceId: string): void;
  handle(method: string, url: URL, body: string, contentType: string, scopes: string[], response: ServerResponse): boolean;
}

const META_KEYS = ['EXTERN_ID', 'EMAIL', 'PHONE', 'GEN', 'DOBY', 'DOBM', 'DOBD', 'LN', 'FN', 'FI', 'CT', 'ST', 'ZIP', 'MADID', 'COUNTRY'];
const UNHASHED_KEYS = new Set(['EXTERN_ID', 'MADID']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Meta's customer-file custom audiences as the Marketing API documents them
 * (developers.facebook.com/docs/marketing-api/audiences/guides/custom-audiences, …/reference/custom-audience/users):
 * `act_{id}/customaudiences` (subtype CUSTOM, a customer_file_source), the audience's fields, and
 * `POST`/`DELETE {id}/users` with `payload {schema, data}` and `session`: ≤ 10,000 rows, rows as
 * long as the schema, a session's batches from 1 in order with its first schema, nothing after
 * `last_batch_flag`. A value that is not a lowercase SHA-256 (or, for MADID, a lowercase UUID) is
 * counted in `num_invalid_entries` and not added, as Meta does. Throttling, grant, terms, flagged
 * and "too small" errors have Graph's shape and codes.
 */
function createFakeCustomAudiences(accountIds: () => string[]): FakeCustomAudiences {
  const faults: { fault: FakeGraphFault; route: FakeCustomAudienceRoute | undefined; times: number }[] = [];
  let nextId = 23_850_000_000_001;
  const rowOf = (schema: string[], row: string[]) =>
    schema
      .map((key, index) => (row[index] ? `${key}=${row[index]}` : ''))
      .filter((pair) => pair !== '')
      .sort()
      .join('&');
  const validValue = (key: string, value: string) =>
    value === '' || (key === 'MADID' ? UUID.test(value) : key === 'EXTERN_ID' ? value.length <= 255 : HEX_64.test(value));

  const fake: FakeCustomAudiences = {
    audiences: new Map(),
    requests: [],
    sessions: new Map(),
    maxBodyBytes: 10_000_000,
    minimumSizeAfterRemoval: 0,
    matchRate: 0.55,
    termsAccepted: true,
    usersDelayMs: 0,
    inFlight: new Map(),
    failNext: (fault, options = {}) => faults.push({ fault, route: options.route, times: options.times ?? 1 }),
    flag: (audienceId) => {
      fake.audiences.get(audienceId)!.flagged = true;
    },
    handle: (method, url, body, contentType, scopes, response) => {
      const path = url.pathname;
      const create = /^\/v25\.0\/act_(\d+)\/customaudiences$/.exec(path);
      const users = /^\/v25\.0\/(\d+)\/users$/.exec(path);
      const node = /^\/v25\.0\/(\d+)$/.exec(path);
      const route: FakeCustomAudienceRoute | undefined =
        create && method === 'POST'
          ? 'create'
          : users && (method === 'POST' || method === 'DELETE')
            ? 'users'
            : node && method === 'GET'
              ? 'get'
              : undefined;
      if (route === undefined) return false;
      if (route === 'users') {
        // Held like a slow platform: the request is taken (and judged) now, answered later.
        const audienceId = users![1]!;
        const counter = fake.inFlight.get(audienceId) ?? { now: 0, most: 0 };
        fake.inFlight.set(audienceId, counter);
        counter.now++;
        counter.most = Math.max(counter.most, counter.now);
        const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
        response.end = ((...args: unknown[]) => {
          setTimeout(() => {
            counter.now--;
            end(...args);
          }, fake.usersDelayMs);
          return response;
        }) as typeof response.end;
      }
      const pending = faults.find((entry) => entry.route === undefined || entry.route === route);
      if (pending) {
        if (--pending.times <= 0) faults.splice(faults.indexOf(pending), 1);
        const { fault } = pending;
        const usage: Record<string, string> =
          fault.regainAccessMinutes === undefined
            ? {}
            : {
                'x-business-use-case-usage': JSON.stringify({
                  '1': [
                    {
                      type: 'custom_audience',
                      call_count: 100,
                      total_cputime: 20,
                      total_time: 30,
                      estimated_time_to_regain_access: fault.regainAccessMinutes,
                    },
                  ],
                }),
              };
        return graphError(response, fault.status ?? 400, fault.code, fault.message ?? 'Fault injected by the test.', fault.subcode, usage);
      }
      if (!scopes.includes('ads_management'))
        return graphError(response, 403, 200, 'Requires ads_management permission to manage the object.');
      if (Buffer.byteLength(body) > fake.maxBodyBytes)
        return graphError(response, 413, 1, 'Please reduce the amount of data you are sending.');
      let params: Record<string, unknown> = {};
      try {
        if (contentType.startsWith('application/json')) params = body === '' ? {} : (JSON.parse(body) as Record<string, unknown>);
        else
          for (const [key, value] of new URLSearchParams(body))
            params[key] = key === 'payload' || key === 'session' ? (JSON.parse(value) as unknown) : value;
      } catch {
        return graphError(response, 400, 100, 'Invalid parameter: the body is not JSON.');
      }

      if (route === 'create') {
        const accountId = create![1]!;
        if (!accountIds().includes(accountId))
          return graphError(response, 400, 100, `Unsupported post request. Object with ID 'act_${accountId}' does not exist.`, 33);
        if (!fake.termsAccepted) return graphError(response, 400, 200, 'Custom Audience Terms Not Accepted', 1870090);
        if (typeof params.name !== 'string' || params.name.trim() === '')
          return graphError(response, 400, 100, 'Invalid parameter: name is required.');
        if (params.subtype !== 'CUSTOM') return graphError(response, 400, 100, 'Invalid parameter: subtype.');
        if (
          !['USER_PROVIDED_ONLY', 'PARTNER_PROVIDED_ONLY', 'BOTH_USER_AND_PARTNER_PROVIDED'].includes(String(params.customer_file_source))
        )
          return graphError(response, 400, 100, 'Invalid parameter: customer_file_source.');
        const audience: FakeCustomAudience = {
          id: String(nextId++),
          accountId,
          name: params.name,
          description: typeof params.description === 'string' ? params.description : undefined,
          subtype: params.subtype,
          customerFileSource: String(params.customer_file_source),
          rows: new Set(),
          flagged: false,
        };
        fake.audiences.set(audience.id, audience);
        json(response, 200, { id: audience.id });
        return true;
      }

      const audience = fake.audiences.get((users ?? node)![1]!);
      if (!audience)
        return graphError(response, 400, 100, `Unsupported request. Object with ID '${(users ?? node)![1]}' does not exist.`, 33);
      if (route === 'get') {
        const matched = Math.round(audience.rows.size * fake.matchRate);
        const all: Record<string, unknown> = {
          id: audience.id,
          name: audience.name,
          description: audience.description,
          subtype: audience.subtype,
          customer_file_source: audience.customerFileSource,
          approximate_count_lower_bound: Math.floor(matched * 0.9),
          approximate_count_upper_bound: Math.ceil(matched * 1.1),
          operation_status: audience.flagged
            ? { code: 471, description: 'This audience has been flagged.' }
            : { code: 200, description: 'Normal' },
        };
        const fields = (url.searchParams.get('fields') ?? 'id').split(',');
        json(response, 200, Object.fromEntries(fields.filter((field) => field in all).map((field) => [field, all[field]])));
        return true;
      }

      if (audience.flagged) return graphError(response, 400, 100, 'Invalid parameter', 1713230);
      const payload = (params.payload ?? {}) as Record<string, unknown>;
      const session = params.session as FakeUsersRequest['session'] | undefined;
      const schema = typeof payload.schema === 'string' ? [payload.schema] : payload.schema;
      if (
        !Array.isArray(schema) ||
        schema.length === 0 ||
        schema.some((key) => !META_KEYS.includes(key)) ||
        new Set(schema).size !== schema.length
      )
        return graphError(response, 400, 100, 'Invalid parameter: the schema is not valid.');
      const data = payload.data;
      if (!Array.isArray(data) || data.length === 0) return graphError(response, 400, 100, 'Data is missing or does not match schema.');
      if (data.length > 10_000) return graphError(response, 400, 100, 'Too many rows: at most 10000 per request.');
      if (
        data.some((row) => !Array.isArray(row) || row.length !== schema.length || row.some((value: unknown) => typeof value !== 'string'))
      )
        return graphError(response, 400, 100, 'Data is missing or does not match schema.');
      if (
        typeof session !== 'object' ||
        session === null ||
        !Number.isSafeInteger(session.session_id) ||
        session.session_id <= 0 ||
        !Number.isSafeInteger(session.batch_seq) ||
        session.batch_seq <= 0 ||
        typeof session.last_batch_flag !== 'boolean'
      )
        return graphError(response, 400, 100, 'Invalid parameter: session.');
      const known = fake.sessions.get(session.session_id);
      const schemaText = JSON.stringify(schema);
      if (!known && session.batch_seq !== 1) return graphError(response, 400, 100, 'Invalid parameter: a session starts at batch_seq 1.');
      if (known) {
        if (known.closed) return graphError(response, 400, 100, 'Invalid parameter: the session has ended (last_batch_flag).');
        if (known.audienceId !== audience.id || known.method !== method)
          return graphError(response, 400, 100, 'Invalid parameter: the session belongs to another upload.');
        if (known.schema !== schemaText) return graphError(response, 400, 100, 'Invalid parameter: the schema changed within the session.');
        if (session.batch_seq !== known.lastSeq + 1) return graphError(response, 400, 100, 'Invalid parameter: batch_seq out of order.');
      }
      const rows = data as string[][];
      let invalidEntries = 0;
      const validRows: string[] = [];
      for (const row of rows) {
        const hashedOk = row.every((value, index) => validValue(schema[index]!, value));
        const hasHashedOrKey = row.some((value, index) => value !== '' && (UNHASHED_KEYS.has(schema[index]!) || HEX_64.test(value)));
        if (!hashedOk || !hasHashedOrKey) invalidEntries++;
        else validRows.push(rowOf(schema, row));
      }
      if (method === 'DELETE') {
        const remaining = [...audience.rows].filter((stored) => !validRows.some((row) => sharesKey(stored, row))).length;
        if (fake.minimumSizeAfterRemoval > 0 && remaining < fake.minimumSizeAfterRemoval)
          return graphError(
            response,
            400,
            200,
            'You cannot remove users from this audience because it will result in a low audience size.',
            1870047,
          );
        for (const stored of [...audience.rows]) if (validRows.some((row) => sharesKey(stored, row))) audience.rows.delete(stored);
      } else for (const row of validRows) audience.rows.add(row);
      const state = known ?? { audienceId: audience.id, method, schema: schemaText, lastSeq: 0, closed: false, received: 0 };
      state.lastSeq = session.batch_seq;
      state.closed = session.last_batch_flag;
      state.received += rows.length;
      fake.sessions.set(session.session_id, state);
      fake.requests.push({
        method: method as 'POST' | 'DELETE',
        audienceId: audience.id,
        bytes: Buffer.byteLength(body),
        session,
        schema,
        data: rows,
        invalidEntries,
      });
      json(response, 200, {
        audience_id: audience.id,
        session_id: session.session_id,
        num_received: state.received,
        num_invalid_entries: invalidEntries,
        invalid_entry_samples: {},
      });
      return true;
    },
  };
  return fake;
}

/** Whether two stored rows share a matching key (email, phone, mobile ad id or external id). */
function sharesKey(left: string, right: string): boolean {
  const keys = (row: string) => row.split('&').filter((pair) => /^(EMAIL|PHONE|MADID|EXTERN_ID)=/.test(pair));
  const rightKeys = new Set(keys(right));
  return keys(left).some((pair) => rightKeys.has(pair));
}

// ─── Signal events (SPEC 10.4): Google's events:ingest and Meta's Conversions API ─────────────────

/** A fault the next `times` event requests answer with instead of judging the request. */
export type FakeEventsFault =
  { kind: 'rate_limited'; retryAfterSeconds?: number } | { kind: 'server_error'; status?: number; retryAfterSeconds?: number };

/** An events:ingest request the fake accepted, as received. */
export interface FakeEventsIngestRequest {
  requestId: string;
  operatingAccountId: string;
  conversionActionId: string;
  encoding: unknown;
  validateOnly: boolean;
  events: Record<string, unknown>[];
}

export interface FakeEventsIngest {
  /** Conversion actions by id, each in the Google Ads account that owns it. */
  conversionActions: Map<string, string>;
  /** Every request accepted (validateOnly ones included), in order. */
  requests: FakeEventsIngestRequest[];
  /** Every call, accepted or not, with the status answered. */
  calls: { status: number; events: number }[];
  failNext(fault: FakeEventsFault, options?: { times?: number }): void;
  handle(method: string, body: string, scopes: string[] | undefined, response: ServerResponse): void;
}

const GCLID = /^[A-Za-z0-9_-]{1,255}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The Data Manager API's `events:ingest` as event.proto and the events guides describe it
 * (developers.google.com/data-manager/api/devguides/events): a live token with the `datamanager`
 * scope, one to ten destinations whose Google Ads account the user reaches (else 403
 * PERMISSION_DENIED) and whose conversion action exists there (else 404 NOT_FOUND), 1 to 2,000
 * events, `encoding` HEX or BASE64 when user data is sent; each event a transaction id, an RFC 3339
 * timestamp at most 90 days old, a non-negative value with an ISO 4217 currency, hashed
 * identifiers (a raw email is refused), an address of four parts with the names hashed and region
 * and postal code clear, a well-formed gclid, and something to match by. One bad event refuses the
 * whole request with INVALID_ARGUMENT naming it; nothing of it is kept.
 */
function createFakeEventsIngest(accountIds: () => string[]): FakeEventsIngest {
  const faults: { fault: FakeEventsFault; times: number }[] = [];
  const rpcError = (
    response: ServerResponse,
    status: number,
    rpcStatus: string,
    message: string,
    violation?: { field: string; reason: string },
    headers: Record<string, string> = {},
  ) => {
    const details = violation
      ? [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ ...violation, description: message }] }]
      : [];
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    response.end(JSON.stringify({ error: { code: status, message, status: rpcStatus, details } }));
  };
  const eventProblem = (event: Record<string, unknown>, index: number, encoding: unknown): [string, string, string] | undefined => {
    const at = `events[${index}]`;
    if (typeof event.transactionId !== 'string' || event.transactionId === '' || event.transactionId.length > 255)
      return ['The transaction id is not valid.', 'INVALID_TRANSACTION_ID', `${at}.transaction_id`];
    const timestamp = event.eventTimestamp;
    if (typeof timestamp !== 'string' || !RFC3339.test(timestamp) || Number.isNaN(Date.parse(timestamp)))
      return ['The event timestamp is required.', 'REQUIRED_FIELD_MISSING', `${at}.event_timestamp`];
    const time = Date.parse(timestamp);
    if (time < Date.now() - 90 * 86_400_000) return ['The event is too old.', 'EVENT_TIME_TOO_OLD', `${at}.event_timestamp`];
    if (time > Date.now() + 10 * 60_000) return ['The event is in the future.', 'EVENT_TIME_IN_FUTURE', `${at}.event_timestamp`];
    if (event.conversionValue !== undefined && (typeof event.conversionValue !== 'number' || event.conversionValue < 0))
      return ['The conversion value is not valid.', 'INVALID_CONVERSION_VALUE', `${at}.conversion_value`];
    if (event.currency !== undefined && (typeof event.currency !== 'string' || !/^[A-Z]{3}$/.test(event.currency)))
      return ['The currency code is not valid.', 'INVALID_CURRENCY_CODE', `${at}.currency`];
    const gclid = (event.adIdentifiers as Record<string, unknown> | undefined)?.gclid;
    if (gclid !== undefined && (typeof gclid !== 'string' || !GCLID.test(gclid)))
      return ['The gclid could not be decoded.', 'INVALID_GCLID', `${at}.ad_identifiers.gclid`];
    const identifiers = (event.userData as { userIdentifiers?: Record<string, unknown>[] } | undefined)?.userIdentifiers ?? [];
    if (identifiers.length > 10) return ['Too many user identifiers.', 'TOO_MANY_USER_IDENTIFIERS', `${at}.user_data.user_identifiers`];
    if (identifiers.length > 0 && encoding !== 'HEX' && encoding !== 'BASE64')
      return ['The encoding is required for user data.', 'INVALID_ENUM_VALUE', 'encoding'];
    const hashed = encoding === 'BASE64' ? BASE64_SHA256 : HEX_64;
    for (const [position, identifier] of identifiers.entries()) {
      const field = `${at}.user_data.user_identifiers[${position}]`;
      const { emailAddress, phoneNumber, address } = identifier;
      if (emailAddress !== undefined && (typeof emailAddress !== 'string' || !hashed.test(emailAddress)))
        return ['The email address is not a SHA-256 hash in the request encoding.', 'INVALID_HEX_ENCODING', `${field}.email_address`];
      if (phoneNumber !== undefined && (typeof phoneNumber !== 'string' || !hashed.test(phoneNumber)))
        return ['The phone number is not a SHA-256 hash in the request encoding.', 'INVALID_HEX_ENCODING', `${field}.phone_number`];
      if (address !== undefined) {
        const parts = address as Record<string, unknown>;
        for (const name of ['givenName', 'familyName'])
          if (typeof parts[name] !== 'string' || !hashed.test(parts[name] as string))
            return ['The name is not a SHA-256 hash in the request encoding.', 'INVALID_HEX_ENCODING', `${field}.address`];
        if (typeof parts.regionCode !== 'string' || !/^[A-Z]{2}$/.test(parts.regionCode))
          return ['The region code is not valid.', 'INVALID_COUNTRY_CODE', `${field}.address.region_code`];
        if (typeof parts.postalCode !== 'string' || parts.postalCode.trim() === '' || HEX_64.test(parts.postalCode))
          return ['The postal code is not valid.', 'INVALID_POSTAL_CODE', `${field}.address.postal_code`];
      }
    }
    if (identifiers.length === 0 && gclid === undefined)
      return ['The event has no user data or ad identifiers to match.', 'REQUIRED_FIELD_MISSING', `${at}.user_data`];
    return undefined;
  };

  let nextRequest = 1;
  const fake: FakeEventsIngest = {
    conversionActions: new Map(),
    requests: [],
    calls: [],
    failNext: (fault, options = {}) => faults.push({ fault, times: options.times ?? 1 }),
    handle: (method, body, scopes, response) => {
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        parsed = {};
      }
      const events = Array.isArray(parsed.events) ? (parsed.events as Record<string, unknown>[]) : [];
      const original = response.writeHead.bind(response);
      response.writeHead = ((status: number, ...rest: unknown[]) => {
        fake.calls.push({ status, events: events.length });
        return (original as (...args: unknown[]) => ServerResponse)(status, ...rest);
      }) as typeof response.writeHead;
      if (method !== 'POST') return rpcError(response, 404, 'NOT_FOUND', 'Method not found.');
      if (scopes === undefined) return rpcError(response, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
      if (!scopes.includes(DATAMANAGER))
        return rpcError(response, 403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', undefined, {
          'www-authenticate': `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="${DATAMANAGER}"`,
        });
      const pending = faults[0];
      if (pending) {
        if (--pending.times <= 0) faults.shift();
        const { fault } = pending;
        const headers: Record<string, string> =
          fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
        if (fault.kind === 'rate_limited')
          return rpcError(response, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric.', undefined, headers);
        return rpcError(response, fault.status ?? 503, 'UNAVAILABLE', 'The service is currently unavailable.', undefined, headers);
      }
      const destinations = Array.isArray(parsed.destinations) ? (parsed.destinations as Record<string, Record<string, unknown>>[]) : [];
      if (destinations.length === 0 || destinations.length > 10)
        return rpcError(response, 400, 'INVALID_ARGUMENT', 'One to ten destinations are required.', {
          field: 'destinations',
          reason: 'INVALID_DESTINATION',
        });
      const destination = destinations[0]!;
      const operating = destination.operatingAccount ?? {};
      const accountId = String(operating.accountId ?? '');
      if (operating.accountType !== 'GOOGLE_ADS' || !/^\d+$/.test(accountId))
        return rpcError(response, 400, 'INVALID_ARGUMENT', 'The destination is not valid.', {
          field: 'destinations[0].operating_account',
          reason: 'INVALID_DESTINATION',
        });
      if (!accountIds().includes(accountId)) return rpcError(response, 403, 'PERMISSION_DENIED', 'The caller does not have permission.');
      const conversionActionId = String(destination.productDestinationId ?? '');
      if (fake.conversionActions.get(conversionActionId) !== accountId)
        return rpcError(response, 404, 'NOT_FOUND', 'The conversion action was not found.');
      if (events.length === 0)
        return rpcError(response, 400, 'INVALID_ARGUMENT', 'At least one event is required.', {
          field: 'events',
          reason: 'REQUIRED_FIELD_MISSING',
        });
      if (events.length > 2_000)
        return rpcError(response, 400, 'INVALID_ARGUMENT', 'Too many events.', { field: 'events', reason: 'TOO_MANY_EVENTS' });
      for (const [index, event] of events.entries()) {
        const problem = eventProblem(event, index, parsed.encoding);
        if (problem) return rpcError(response, 400, 'INVALID_ARGUMENT', problem[0], { field: problem[2], reason: problem[1] });
      }
      const requestId = `events-${nextRequest++}`;
      fake.requests.push({
        requestId,
        operatingAccountId: accountId,
        conversionActionId,
        encoding: parsed.encoding,
        validateOnly: parsed.validateOnly === true,
        events,
      });
      json(response, 200, { requestId });
    },
  };
  return fake;
}

/** A Conversions API request the fake accepted, as received. */
export interface FakeConversionsRequest {
  pixelId: string;
  testEventCode: string | undefined;
  data: Record<string, unknown>[];
}

export interface FakeConversions {
  /** Pixels (datasets) the fake knows. */
  pixels: Set<string>;
  requests: FakeConversionsRequest[];
  calls: { status: number; events: number }[];
  /** The next `times` requests answer with this Graph error (Graph answers most with 400), or a 429 when `status` says so. */
  failNext(fault: FakeGraphFault & { retryAfterSeconds?: number }, options?: { times?: number }): void;
  handle(method: string, url: URL, body: string, scopes: string[], response: ServerResponse): boolean;
}

const META_ACTION_SOURCES = [
  'email',
  'website',
  'app',
  'phone_call',
  'chat',
  'physical_store',
  'system_generated',
  'business_messaging',
  'other',
];
const FBC = /^fb\.\d\.\d{10,13}\.[A-Za-z0-9_-]+$/;
const FBP = /^fb\.\d\.\d{10,13}\.\d+$/;

/**
 * Meta's Conversions API as developers.facebook.com/docs/marketing-api/conversions-api documents it:
 * `POST /{pixel_id}/events` with `data` of 1 to 1,000 server events and an optional
 * `test_event_code`; an unknown pixel is error 100/33; each event needs `event_name`, an integer
 * `event_time` at most 7 days old, `action_source` from Meta's list, `user_data` whose hashed keys
 * are SHA-256 hex and whose clear keys are not (an IP address that is not one, an `fbc`/`fbp` not
 * in Meta's `fb.1.…` format), and for `website` events `client_user_agent` and `event_source_url`.
 * One bad event refuses the whole request (code 100), as Meta does; an accepted one answers
 * `events_received`.
 */
function createFakeConversions(): FakeConversions {
  const faults: { fault: FakeGraphFault & { retryAfterSeconds?: number }; times: number }[] = [];
  const HASHED_LISTS = ['em', 'ph', 'external_id'];
  const HASHED_SINGLE = ['fn', 'ln', 'ct', 'st', 'zp', 'country', 'ge', 'db'];
  const eventProblem = (event: Record<string, unknown>, index: number): string | undefined => {
    const at = `data[${index}]`;
    if (typeof event.event_name !== 'string' || event.event_name === '') return `${at}: event_name is required`;
    if (typeof event.event_time !== 'number' || !Number.isInteger(event.event_time))
      return `${at}: event_time must be a Unix timestamp in seconds`;
    const now = Math.floor(Date.now() / 1000);
    if (event.event_time < now - 7 * 86_400) return `${at}: event_time is more than 7 days in the past`;
    if (event.event_time > now + 600) return `${at}: event_time is in the future`;
    if (event.event_id !== undefined && typeof event.event_id !== 'string') return `${at}: event_id must be a string`;
    if (typeof event.action_source !== 'string' || !META_ACTION_SOURCES.includes(event.action_source))
      return `${at}: action_source is invalid`;
    const user = event.user_data as Record<string, unknown> | undefined;
    if (typeof user !== 'object' || user === null) return `${at}: user_data is required`;
    for (const key of HASHED_LISTS) {
      const value = user[key];
      if (value === undefined) continue;
      const values = Array.isArray(value) ? value : [value];
      if (values.some((entry) => typeof entry !== 'string' || !HEX_64.test(entry))) return `${at}: user_data.${key} must be SHA-256 hashed`;
    }
    for (const key of HASHED_SINGLE)
      if (user[key] !== undefined && (typeof user[key] !== 'string' || !HEX_64.test(user[key] as string)))
        return `${at}: user_data.${key} must be SHA-256 hashed`;
    if (
      user.client_ip_address !== undefined &&
      (typeof user.client_ip_address !== 'string' ||
        !/^[0-9a-fA-F.:]{2,45}$/.test(user.client_ip_address) ||
        HEX_64.test(user.client_ip_address))
    )
      return `${at}: user_data.client_ip_address is not an IP address`;
    if (user.fbc !== undefined && (typeof user.fbc !== 'string' || !FBC.test(user.fbc))) return `${at}: user_data.fbc is malformed`;
    if (user.fbp !== undefined && (typeof user.fbp !== 'string' || !FBP.test(user.fbp))) return `${at}: user_data.fbp is malformed`;
    if (event.action_source === 'website' && (typeof user.client_user_agent !== 'string' || typeof event.event_source_url !== 'string'))
      return `${at}: website events require client_user_agent and event_source_url`;
    const custom = event.custom_data as Record<string, unknown> | undefined;
    if (custom?.value !== undefined && (typeof custom.value !== 'number' || custom.value < 0)) return `${at}: custom_data.value is invalid`;
    if (custom?.currency !== undefined && (typeof custom.currency !== 'string' || !/^[A-Za-z]{3}$/.test(custom.currency)))
      return `${at}: custom_data.currency is invalid`;
    return undefined;
  };

  const fake: FakeConversions = {
    pixels: new Set(),
    requests: [],
    calls: [],
    failNext: (fault, options = {}) => faults.push({ fault, times: options.times ?? 1 }),
    handle: (method, url, body, _scopes, response) => {
      const match = /^\/v25\.0\/(\d+)\/events$/.exec(url.pathname);
      if (!match || method !== 'POST') return false;
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        parsed = {};
      }
      const data = Array.isArray(parsed.data) ? (parsed.data as Record<string, unknown>[]) : [];
      const original = response.writeHead.bind(response);
      response.writeHead = ((status: number, ...rest: unknown[]) => {
        fake.calls.push({ status, events: data.length });
        return (original as (...args: unknown[]) => ServerResponse)(status, ...rest);
      }) as typeof response.writeHead;
      const pending = faults[0];
      if (pending) {
        if (--pending.times <= 0) faults.shift();
        const { fault } = pending;
        const headers: Record<string, string> = {};
        if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
        if (fault.regainAccessMinutes !== undefined)
          headers['x-business-use-case-usage'] = JSON.stringify({
            '1': [{ type: 'ads_management', estimated_time_to_regain_access: fault.regainAccessMinutes }],
          });
        return graphError(
          response,
          fault.status ?? 400,
          fault.code,
          fault.message ?? 'Application request limit reached',
          fault.subcode,
          headers,
        );
      }
      const pixelId = match[1]!;
      if (!fake.pixels.has(pixelId))
        return graphError(
          response,
          400,
          100,
          `Unsupported post request. Object with ID '${pixelId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
          33,
        );
      if (data.length === 0) return graphError(response, 400, 100, 'The parameter data is required', 2804001);
      if (data.length > 1_000) return graphError(response, 400, 100, 'A request may carry at most 1000 events', 2804002);
      for (const [index, event] of data.entries()) {
        const problem = eventProblem(event, index);
        if (problem) return graphError(response, 400, 100, `Invalid parameter: ${problem}`, 2804003);
      }
      fake.requests.push({
        pixelId,
        testEventCode: typeof parsed.test_event_code === 'string' ? parsed.test_event_code : undefined,
        data,
      });
      json(response, 200, { events_received: data.length, messages: [], fbtrace_id: 'AFakeCapi' });
      return true;
    },
  };
  return fake;
}
