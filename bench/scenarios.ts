import type { Request } from 'autocannon';

/** Ids of the main workspace the request generators pick from. */
export interface ScenarioData {
  signalIds: number[];
  /** Signals that are not archived: a PATCH of an archived one is (rightly) a 400. */
  editableSignalIds: number[];
  audienceIds: number[];
  /** The deep page of the main workspace's unfiltered signal list. */
  deepPage: number;
  /** A paused signal with a Google Ads destination, made for each run: its events are held, so no delivery runs. */
  eventsSignalId: number;
}

export interface Scenario {
  name: string;
  description: string;
  /** Names a target of issue 6 ("list page 1") so the report can check it. */
  listPageOne?: boolean;
  /**
   * A request built to be expensive (SPEC section 8), answered 400 by the body checks: run on the
   * service only (the ceiling has no such checks), to compare its CPU per request with a normal one's.
   */
  hostile?: boolean;
  /** A write of the data plane (1,000 rows or events per request): held to its floor at 0.80, not 0.90. */
  dataPlane?: boolean;
  /**
   * Connections of this scenario when not the run's (BENCH_CONNECTIONS): a bulk client sends a few
   * 1,000-row requests at a time; 32 at once would be refused by the workspace's share of the
   * database pool (429, WORKSPACE_POOL_SHARE), as designed.
   */
  connections?: number;
  /** The scenario whose CPU per request a hostile one is held to (a harmless body of about the same size). */
  comparedWith?: string;
  /**
   * The requests of one autocannon run. `tag` makes POSTed names unique per run and target;
   * `authorization` is the whole header value (`Bearer …` or `Api-Key …`).
   */
  requests(authorization: string, data: ScenarioData, tag: string): Request[];
}

/** Rows per people batch and events per events request: the API's maximum, what a bulk client sends. */
const BATCH_SIZE = 1_000;
/** Batches of distinct people per run and server: 20,000 people, then the same people again. */
const BATCH_POOL = 20;
/** Connections of the data plane's write scenarios: requests of 1,000 rows, 4 at a time. */
const BULK_CONNECTIONS = 4;
/** The people batches' external ids start so; each run removes those of earlier runs (bench/seed.ts). */
export const BATCH_EXTERNAL_ID_PREFIX = 'bench-batch-';

function pick(ids: number[]): number {
  return ids[Math.floor(Math.random() * ids.length)]!;
}

const get = (authorization: string, path: string): Request => ({ method: 'GET', path, headers: { authorization } });

/** A GET of a random signal: the detail route with ids spread over the whole workspace (not one hot row). */
function detail(authorization: string, data: ScenarioData): Request {
  return {
    method: 'GET',
    headers: { authorization },
    setupRequest: (request) => ({ ...request, path: `/api/v1/signals/${pick(data.signalIds)}/` }),
  };
}

/** A PATCH that always changes the description (a counter in the value), so every request writes. */
function patch(authorization: string, data: ScenarioData, tag: string): Request {
  let counter = 0;
  return {
    method: 'PATCH',
    headers: { authorization, 'content-type': 'application/json' },
    setupRequest: (request) => ({
      ...request,
      path: `/api/v1/signals/${pick(data.editableSignalIds)}/`,
      body: JSON.stringify({ description: `Edited by the benchmark (${tag} #${++counter}).` }),
    }),
  };
}

/** A POST of a draft signal with a unique name, an audience (checked by the service) and a small config. */
function post(authorization: string, data: ScenarioData, tag: string): Request {
  let counter = 0;
  return {
    method: 'POST',
    path: '/api/v1/signals/',
    headers: { authorization, 'content-type': 'application/json' },
    setupRequest: (request) => ({
      ...request,
      body: JSON.stringify({
        name: `bench-post ${tag} ${++counter}`,
        description: 'Created by the benchmark.',
        signal_type: 'conversion',
        audience: pick(data.audienceIds),
        config: { conversion_action: 'purchase', lookback_days: 30 },
      }),
    }),
  };
}

/** `{"k0":1,"k1":1,…}` with `count` keys: about 0.9 MB at 94,000, the body that stalled the token endpoint. */
function wideObject(count: number): string {
  const members: string[] = [];
  for (let index = 0; index < count; index++) members.push(`"k${index}":1`);
  return `{${members.join(',')}}`;
}

const WIDE_LOGIN = wideObject(94_000);
/** A harmless body of the same size: one long string, refused by validation (too long an email) after a full parse. */
const LONG_LOGIN = JSON.stringify({ email: 'x'.repeat(WIDE_LOGIN.length - 40), password: 'x' });
const DEEP_BODY = `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
const WIDE_MCP_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'list_audiences', arguments: Object.fromEntries(Array.from({ length: 60_000 }, (_, index) => [`a${index}`, 1])) },
});

/** `code=x&code=x&…`: one form field repeated 30,000 times (90 KB), the body that stalled the social-login POST. */
const REPEATED_FORM = Array.from({ length: 30_000 }, () => 'code=x').join('&');

/**
 * The rows of a people batch: what an ETL job sends, 1,000 people each with 2 traits and 7
 * identifiers to normalise and hash. The external ids cycle through BATCH_POOL batches per run and
 * server, so each server writes its first batches as new people and the rest as updates, and the
 * table grows alike for all three (not with each server's throughput).
 */
function peopleBatch(authorization: string, tag: string): Request {
  let counter = 0;
  return {
    method: 'POST',
    path: '/api/v1/people/batch/',
    headers: { authorization, 'content-type': 'application/json' },
    setupRequest: (request) => {
      const batch = ++counter % BATCH_POOL;
      const people = Array.from({ length: BATCH_SIZE }, (_, index) => {
        const n = batch * BATCH_SIZE + index;
        return {
          external_id: `${BATCH_EXTERNAL_ID_PREFIX}${tag}-${n}`,
          identifiers: {
            email: `Customer.${n}@Example.com`,
            phone: `+4930${String(1_000_000 + n).padStart(8, '0')}`,
            first_name: 'Ada',
            last_name: `Lovelace-${n % 997}`,
            country_code: 'DE',
            postal_code: String(10_000 + (n % 90_000)),
          },
          traits: { plan: n % 3 === 0 ? 'gold' : 'silver', orders: n % 17 },
        };
      });
      return { ...request, body: JSON.stringify({ people }) };
    },
  };
}

/**
 * Event `n` of a bulk sender: a conversion within the last hour with an email, a phone and a value,
 * and the click id of the destination's platform (Google's gclid, Meta's fbp).
 */
export function sampleEvent(eventId: string, n: number, now: number, platform: 'google_ads' | 'meta_ads') {
  return {
    event_id: eventId,
    event_time: new Date(now - (n % 3_600) * 1000).toISOString(),
    value: (n % 500) + 0.99,
    currency: 'EUR',
    identifiers: { email: `Customer.${n}@Example.com`, phone: `+4930${String(1_000_000 + n).padStart(8, '0')}` },
    ...(platform === 'google_ads' ? { gclid: `Cj0KCQ${n}` } : { fbp: `fb.1.1700000000000.${n}` }),
  };
}

/** 1,000 new conversions of the events signal (its destination is Google Ads). */
function signalEvents(authorization: string, data: ScenarioData, tag: string): Request {
  let counter = 0;
  return {
    method: 'POST',
    path: `/api/v1/signals/${data.eventsSignalId}/events/`,
    headers: { authorization, 'content-type': 'application/json' },
    setupRequest: (request) => {
      const batch = ++counter;
      const now = Date.now();
      const events = Array.from({ length: BATCH_SIZE }, (_, index) => {
        const n = batch * BATCH_SIZE + index;
        return sampleEvent(`${tag}-${n}`, n, now, 'google_ads');
      });
      return { ...request, body: JSON.stringify({ events }) };
    },
  };
}

const postRaw = (path: string, body: string, authorization?: string): Request => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization && { authorization }) },
  body,
});

export const SCENARIOS: Scenario[] = [
  {
    name: 'audiences p1',
    description: 'GET /api/v1/audiences/ — count + page of 20 + connection ids of the page',
    listPageOne: true,
    requests: (authorization) => [get(authorization, '/api/v1/audiences/')],
  },
  {
    name: 'signals ?status=1',
    description: 'GET /api/v1/signals/?status=1 — filtered count + page 1',
    listPageOne: true,
    requests: (authorization) => [get(authorization, '/api/v1/signals/?status=1')],
  },
  {
    name: 'signals deep page',
    description: 'GET /api/v1/signals/?page=N (N = half the pages, at most 500) — count + OFFSET scan',
    requests: (authorization, data) => [get(authorization, `/api/v1/signals/?page=${data.deepPage}`)],
  },
  {
    name: 'signal detail',
    description: 'GET /api/v1/signals/{random id}/',
    requests: (authorization, data) => [detail(authorization, data)],
  },
  {
    name: 'signal PATCH',
    description: 'PATCH /api/v1/signals/{random non-archived id}/ {description} — a transaction with the reference checks',
    requests: (authorization, data, tag) => [patch(authorization, data, tag)],
  },
  {
    name: 'signal POST',
    description: 'POST /api/v1/signals/ {name (unique), signal_type, audience, config} — a transaction with the audience check',
    requests: (authorization, data, tag) => [post(authorization, data, tag)],
  },
  {
    name: 'mix 80/20',
    description: 'per connection, a cycle of 10: 2 audience lists, 2 status lists, 4 details (80% reads), 1 PATCH, 1 POST',
    requests: (authorization, data, tag) => [
      get(authorization, '/api/v1/audiences/'),
      detail(authorization, data),
      get(authorization, '/api/v1/signals/?status=1'),
      patch(authorization, data, tag),
      detail(authorization, data),
      get(authorization, '/api/v1/audiences/'),
      detail(authorization, data),
      get(authorization, '/api/v1/signals/?status=1'),
      post(authorization, data, tag),
      detail(authorization, data),
    ],
  },
  {
    name: 'people batch',
    description:
      'POST /api/v1/people/batch/ with 1,000 people (email, phone, names, country, postal code, 2 traits; 20 batches new, then updates) — normalised, hashed, 2 statements',
    dataPlane: true,
    connections: BULK_CONNECTIONS,
    requests: (authorization, _data, tag) => [peopleBatch(authorization, tag)],
  },
  {
    name: 'signal events',
    description:
      'POST /api/v1/signals/{paused signal}/events/ with 1,000 new events (email, phone, value, gclid) — normalised, hashed, one INSERT, held',
    dataPlane: true,
    connections: BULK_CONNECTIONS,
    requests: (authorization, data, tag) => [signalEvents(authorization, data, tag)],
  },
  {
    name: 'hostile reference: 0.9 MB login body',
    description: 'POST /api/v1/jwt/create/ with a 0.9 MB email (one string): parsed, then refused by validation → 400',
    hostile: true,
    requests: () => [postRaw('/api/v1/jwt/create/', LONG_LOGIN)],
  },
  {
    name: 'hostile: 94,000-key login body',
    description: 'POST /api/v1/jwt/create/ with 94,000 unknown keys (0.9 MB), no credential → 400 parse_error',
    hostile: true,
    comparedWith: 'hostile reference: 0.9 MB login body',
    requests: () => [postRaw('/api/v1/jwt/create/', WIDE_LOGIN)],
  },
  {
    name: 'hostile: 10,000-deep body',
    description: 'POST /api/v1/audiences/ with JSON nested 10,000 levels → 400 parse_error',
    hostile: true,
    comparedWith: 'signal detail',
    requests: (authorization) => [postRaw('/api/v1/audiences/', DEEP_BODY, authorization)],
  },
  {
    name: 'hostile: 60,000-argument MCP call',
    description: 'POST /mcp tools/call with 60,000 arguments (0.9 MB) → 400 parse_error before any credential check',
    hostile: true,
    comparedWith: 'hostile reference: 0.9 MB login body',
    requests: (authorization) => [postRaw('/mcp', WIDE_MCP_CALL, authorization)],
  },
  {
    name: 'hostile: 30,000-field social-login form',
    description: 'POST /api/v1/auth/o/any/ as a form with one field repeated 30,000 times (90 KB), no credential → 400 parse_error',
    hostile: true,
    comparedWith: 'hostile reference: 0.9 MB login body',
    requests: () => [
      { ...postRaw('/api/v1/auth/o/any/', REPEATED_FORM), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    ],
  },
];
