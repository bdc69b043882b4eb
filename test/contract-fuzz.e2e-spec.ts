import { randomBytes, randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  json,
  login,
  PASSWORD,
  type TestUser,
  type Workspace,
} from './support/factories.js';
import type { JsonLike } from './support/fuzz/json-text.js';
import { collectionOf, HTTP_METHODS, loadDocument, operationsOf, type Operation } from './support/fuzz/openapi-document.js';
import {
  catalogueInputs,
  EXISTING,
  inputArbitrary,
  minimalBody,
  SHARED,
  pathChoices,
  type FuzzInput,
  type Hints,
} from './support/fuzz/request-inputs.js';
import { ResponseContract, type ReceivedResponse } from './support/fuzz/response-contract.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Contract fuzzing (SPEC sections 4, 5 and 8): every operation of the committed openapi.json,
 * with an admin's JWT, a write-scoped API key and no credential, gets the catalogue of hostile
 * inputs (request-inputs.ts) and FUZZ_RUNS generated ones through real HTTP; every answer must be
 * a documented status, never a 5xx, with a body valid against the documented schema, and every
 * error a problem+json body carrying the request id.
 *
 * `npm test` runs a few generated inputs per case with a fixed seed; `npm run fuzz` runs 500.
 * A failure names its seed: rerun it with FUZZ_SEED=<seed> (and the same FUZZ_RUNS).
 */

const DOCUMENT = loadDocument(new URL('../openapi.json', import.meta.url));
const OPERATIONS = operationsOf(DOCUMENT);

const RUNS = integerFromEnv('FUZZ_RUNS', 8);
const SEED = integerFromEnv('FUZZ_SEED', 20_261_121);
/** Per case: the catalogue takes a few seconds at most; generated runs add up to 100 ms each (argon2 on the login). */
const CASE_TIMEOUT_MS = 30_000 + RUNS * 100;

function integerFromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^-?\d+$/.test(value)) throw new Error(`${name} must be an integer, not "${value}".`);
  return Number(value);
}

const CREDENTIALS = ['admin JWT', 'write API key', 'no credential'] as const;
type Credential = (typeof CREDENTIALS)[number];

/**
 * Operations of the document the fuzzer does not exercise, each with its reason. Every other
 * operation must be exercised with every credential: the last test fails otherwise.
 */
const SKIPPED_OPERATIONS: Readonly<Record<string, string>> = {};

/**
 * Violations found and reported to the owner of the code, not yet fixed. A violation matching one
 * is listed by its case as known instead of failing it, so the rest of the suite stays useful.
 * Remove an entry with its fix.
 */
const KNOWN_FINDINGS: readonly { operation: string; violation: RegExp; finding: string }[] = [];

/** How each collection with `{id}` operations gets a fixture: the `EXISTING` id of its path. */
const FIXTURES: Readonly<Record<string, (context: Context) => Promise<number>>> = {
  '/api/v1/audiences/': (context) =>
    createdThroughApi(context, '/api/v1/audiences/', { name: uniqueName('Audience'), source_type: 'rules' }),
  '/api/v1/signals/': (context) =>
    createdThroughApi(context, '/api/v1/signals/', { name: uniqueName('Signal'), signal_type: 'conversion' }),
  '/api/v1/ai-model-instances/': async (context) => (await createModelInstance(context.api, context.workspace)).id,
  '/api/v1/connections/': async (context) => (await createConnection(context.api, context.workspace)).id,
  '/api/v1/mcp-tokens/': createMcpToken,
  '/api/v1/people/': createPerson,
  '/api/v1/imports/': createImport,
  '/api/v1/syncs/': createSyncRun,
  // Sub-collections: their {id} is the audience's or the model instance's.
  '/api/v1/audiences/{id}/members/': (context) =>
    createdThroughApi(context, '/api/v1/audiences/', { name: uniqueName('Upload audience'), source_type: 'upload' }),
  '/api/v1/ai-model-instances/{id}/scores/': async (context) => (await createModelInstance(context.api, context.workspace)).id,
  // A run's action: its {id} is a queued run's (cancelled by the first valid call, a 409 after).
  '/api/v1/syncs/{id}/cancel/': createSyncRun,
  // An active signal takes events (a draft answers 409 to every one).
  '/api/v1/signals/{id}/events/': async (context) =>
    createdThroughApi(context, '/api/v1/signals/', {
      name: uniqueName('Signal with events'),
      signal_type: 'conversion',
      connection: (await createConnection(context.api, context.workspace)).id,
      config: { conversion_action_id: '123456789' },
      status: 1,
    }),
  '/api/v1/webhooks/': createWebhook,
  // Sub-collections and actions of a webhook: their {id} is the webhook's.
  '/api/v1/webhooks/{id}/deliveries/': createWebhook,
  '/api/v1/webhooks/{id}/rotate-secret/': createWebhook,
  '/api/v1/webhooks/{id}/test/': createWebhook,
};

/** A webhook to a closed local port: the fuzzer's app runs no workers, so nothing is ever sent. */
function createWebhook(context: Context): Promise<number> {
  return createdThroughApi(context, '/api/v1/webhooks/', { url: 'http://127.0.0.1:9/hook', events: ['sync.failed'] });
}

interface Context {
  api: TestApp;
  workspace: Workspace;
  admin: TestUser;
  adminJwt: string;
  apiKey: string;
  /** Collection path → the id of its shared fixture. */
  existing: Map<string, number>;
  /** Refresh tokens of sessions of their own, for /jwt/refresh/ (spending one ends nothing else). */
  spareRefreshTokens: string[];
}

const uniqueName = (kind: string) => `Fuzz ${kind} ${randomBytes(6).toString('hex')}`;

async function createdThroughApi(context: Context, path: string, body: Record<string, unknown>): Promise<number> {
  const response = await context.api.request(path, json(body, bearer(context.adminJwt)));
  if (response.status !== 201) throw new Error(`fixture ${path} failed with ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: number }).id;
}

/** People are written in batches, whose answer is counts: the new person is found by its external_id. */
async function createImport(context: Context): Promise<number> {
  const response = await context.api.request('/api/v1/imports/?target=people', {
    method: 'POST',
    headers: { ...bearer(context.adminJwt), 'content-type': 'text/csv' },
    body: `external_id,plan\nfuzz-import-${randomUUID()},gold\n`,
  });
  if (response.status !== 202) throw new Error(`fixture /api/v1/imports/ failed with ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: number }).id;
}

/** A queued run (the fuzzer's app runs no workers) of an active audience with a connection of the workspace. */
async function createSyncRun(context: Context): Promise<number> {
  const connection = (await createConnection(context.api, context.workspace)).id;
  const audience = await createdThroughApi(context, '/api/v1/audiences/', {
    name: uniqueName('Synced audience'),
    source_type: 'upload',
    connections: [connection],
    status: 'active',
  });
  const response = await context.api.request('/api/v1/syncs/', json({ audience }, bearer(context.adminJwt)));
  if (response.status !== 201) throw new Error(`fixture /api/v1/syncs/ failed with ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { runs: { id: number }[] }).runs[0]!.id;
}

async function createPerson(context: Context): Promise<number> {
  const externalId = uniqueName('Person');
  const response = await context.api.request(
    '/api/v1/people/batch/',
    json({ people: [{ external_id: externalId }] }, bearer(context.adminJwt)),
  );
  if (response.status !== 200) throw new Error(`fixture /api/v1/people/ failed with ${response.status}: ${await response.text()}`);
  const listed = await context.api.request(`/api/v1/people/?external_id=${encodeURIComponent(externalId)}`, {
    headers: bearer(context.adminJwt),
  });
  return ((await listed.json()) as { results: { id: number }[] }).results[0]!.id;
}

/**
 * The fuzzer's creates may fill the admin's quota of MCP tokens (a 409): then the fixture makes room
 * by revoking the admin's other tokens, keeping the shared one.
 */
async function createMcpToken(context: Context): Promise<number> {
  const path = '/api/v1/mcp-tokens/';
  const attempt = () => context.api.request(path, json({ name: uniqueName('Token') }, bearer(context.adminJwt)));
  let response = await attempt();
  if (response.status === 409) {
    const page = await context.api.request(`${path}?page_size=100`, { headers: bearer(context.adminJwt) });
    const { results } = (await page.json()) as { results: { id: number }[] };
    for (const { id } of results.filter(({ id }) => id !== context.existing.get(path))) {
      await context.api.request(`${path}${id}/`, { method: 'DELETE', headers: bearer(context.adminJwt) });
    }
    response = await attempt();
  }
  if (response.status !== 201) throw new Error(`fixture ${path} failed with ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: number }).id;
}

/** Known good values, by the name of the body property or query parameter they fit. */
function hintValues(context: Context): Record<string, JsonLike> {
  const id = (collection: string) => context.existing.get(collection)!;
  return {
    customer: context.workspace.customerId,
    model_instance: id('/api/v1/ai-model-instances/'),
    audience: id('/api/v1/audiences/'),
    connection: id('/api/v1/connections/'),
    connections: [id('/api/v1/connections/')],
    email: context.admin.email,
    password: PASSWORD,
    refresh: context.spareRefreshTokens[0],
    token: context.adminJwt,
  };
}

function hints(context: Context): Hints {
  const values = hintValues(context);
  return {
    ...Object.fromEntries(Object.entries(values).map(([name, value]) => [name, fc.constant(value)])),
    // Live tokens, and the other kind of token where one kind is expected.
    refresh: fc.constantFrom(...context.spareRefreshTokens, context.adminJwt),
    token: fc.constantFrom(context.adminJwt, ...context.spareRefreshTokens),
  };
}

interface Exchange {
  request: string;
  response: ReceivedResponse;
}

async function credentialHeaders(context: Context, credential: Credential, operation: Operation): Promise<Record<string, string>> {
  switch (credential) {
    case 'admin JWT':
      // Logging out ends the session of the token it is sent with: each logout gets a session of
      // its own, so the shared token stays good for every other request.
      if (operation.operationId === 'jwt_logout') return bearer((await login(context.api, context.admin)).access);
      return bearer(context.adminJwt);
    case 'write API key':
      return apiKeyHeader(context.apiKey);
    case 'no credential':
      return {};
  }
}

/** Sends `input` (its copies at once) and reads every answer. */
async function send(context: Context, operation: Operation, credential: Credential, input: FuzzInput): Promise<Exchange[]> {
  let id = input.pathId;
  const collection = collectionOf(operation.path);
  if (id === EXISTING && operation.method === 'DELETE') id = String(await FIXTURES[collection](context));
  else if (id === EXISTING || id === SHARED) id = String(context.existing.get(collection));
  const path = id === undefined ? operation.path : operation.path.replace(/\{[^}]+\}/g, id);
  const query = input.query.length > 0 ? `?${input.query.map(([name, value]) => `${name}=${value}`).join('&')}` : '';
  const headers: Record<string, string> = { ...input.headers, ...(await credentialHeaders(context, credential, operation)) };
  if (input.body?.contentType !== undefined) headers['content-type'] = input.body.contentType;
  const request = describeRequest(operation, credential, input, `${path}${query}`);
  const exchanges = await Promise.all(
    Array.from({ length: input.copies }, async (): Promise<Exchange> => {
      const response = await fetch(`${context.api.baseUrl}${path}${query}`, {
        method: operation.method,
        headers,
        body: input.body?.content,
        redirect: 'manual',
      });
      return { request, response: { status: response.status, headers: response.headers, text: await response.text() } };
    }),
  );
  // The shared fixture is gone: later cases get a new one (objects that referred to it keep null).
  if (input.pathId === SHARED && operation.method === 'DELETE' && exchanges.some(({ response }) => response.status === 204)) {
    context.existing.set(collection, await FIXTURES[collection](context));
  }
  return exchanges;
}

/** The request as a failure message shows it: enough to send it again by hand. */
function describeRequest(operation: Operation, credential: Credential, input: FuzzInput, target: string): string {
  const parts = [`${input.copies > 1 ? `${input.copies} × ` : ''}${operation.method} ${truncate(target, 200)} with ${credential}`];
  if (Object.keys(input.headers).length > 0) parts.push(`headers ${truncate(JSON.stringify(input.headers), 120)}`);
  if (input.body) {
    const { label, content, contentType } = input.body;
    const shown = typeof content === 'string' ? JSON.stringify(content) : `bytes ${Buffer.from(content).toString('hex')}`;
    parts.push(`body (${label}) ${truncate(shown, 160)} as ${contentType ?? 'no content type'}`);
  }
  return parts.join(', ');
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}… (${text.length} characters)` : text;
}

interface Finding {
  violation: string;
  count: number;
  example: string;
  known: string | undefined;
}

describe('contract fuzzing from openapi.json (SPEC sections 4, 5 and 8)', () => {
  let context: Context;
  const contract = new ResponseContract();
  /** `operation key|credential` of every case that sent its requests. */
  const exercised = new Set<string>();

  beforeAll(async () => {
    const api = await startTestApp({
      // The fuzzer sends thousands of requests and failed logins from one address in a minute:
      // it tests the contract, not the limiters (test/throttling covers those).
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOGIN_FAILURES_PER_EMAIL_AND_IP: '1000000',
      LOGIN_FAILURES_PER_EMAIL: '1000000',
      LOGIN_FAILURES_PER_IP: '1000000',
      AUTHENTICATION_FAILURES_PER_IP_PER_MINUTE: '1000000',
      // Deleting a connection revokes its grant at the provider: a closed local port answers at once.
      GOOGLE_OAUTH_REVOKE_URL: 'http://127.0.0.1:9/revoke',
      META_GRAPH_URL: 'http://127.0.0.1:9/v19.0',
      PROVIDER_TIMEOUT_MS: '500',
    });
    const workspace = await createWorkspace(api);
    const admin = await createUser(api, workspace, { role: 'admin' });
    context = {
      api,
      workspace,
      admin,
      adminJwt: (await login(api, admin)).access,
      apiKey: (await createApiKey(api, workspace, { scope: 'write' })).key,
      existing: new Map(),
      spareRefreshTokens: [],
    };
    for (let index = 0; index < 3; index++) context.spareRefreshTokens.push((await login(api, admin)).refresh);
    for (const collection of new Set(
      OPERATIONS.filter((operation) => operation.path.includes('{') && !pathChoices(operation)).map((operation) =>
        collectionOf(operation.path),
      ),
    )) {
      const fixture = FIXTURES[collection];
      if (!fixture) throw new Error(`No fixture for ${collection}: add one to FIXTURES so its {id} operations get an existing id.`);
      context.existing.set(collection, await fixture(context));
    }
  });
  afterAll(() => context?.api.close());

  it('reads a valid OpenAPI 3 document', async () => {
    const result = await new Validator().validate(structuredClone(DOCUMENT) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(OPERATIONS.length).toBeGreaterThan(0);
  });

  it('has a contract check that refuses what breaks the contract', () => {
    // The fuzzer passes when it finds nothing: make sure the check itself can fail.
    const operation = OPERATIONS.find(
      (candidate) => candidate.method === 'GET' && candidate.path.includes('{') && !pathChoices(candidate),
    )!;
    const headers = (type: string, requestId = 'r-1') => new Headers({ 'content-type': type, 'x-request-id': requestId });
    const problem = (status: number, extra: object = {}) =>
      JSON.stringify({ type: 'about:blank', title: 'T', status, code: 'not_found', detail: 'D', request_id: 'r-1', ...extra });
    const check = (status: number, type: string, text: string, requestId?: string) =>
      contract.violations(operation, { status, headers: headers(type, requestId), text });
    expect(check(404, 'application/problem+json', problem(404))).toEqual([]);
    expect(check(500, 'application/problem+json', problem(500, { code: 'internal_error' }))).toContain('server error 500');
    expect(check(418, 'application/problem+json', problem(418)).join()).toContain('undocumented status 418');
    expect(check(404, 'application/json', problem(404)).length).toBeGreaterThan(0);
    expect(check(404, 'application/problem+json', problem(404), 'r-2').join()).toContain('X-Request-Id');
    expect(check(404, 'application/problem+json', problem(404, { stack: 'at …' })).join()).toContain('unexpected members stack');
    expect(check(200, 'application/json', JSON.stringify({ id: 'seven' })).join()).toContain('body/id must be integer');
  });

  describe.each(OPERATIONS.map((operation) => [operation.key, operation] as const))('%s', (key, operation) => {
    (key in SKIPPED_OPERATIONS ? it.skip : it).each(CREDENTIALS.map((credential) => [credential]))(
      'keeps the contract with %s',
      async (credential) => {
        const findings = new Map<string, Finding>();
        const schema = operation.requestBody?.content['application/json'] ?? {};
        // A fresh name each time: names are unique in a workspace, and a duplicate would hide what the body is about.
        const minimal = () => ({ ...minimalBody(schema, { ...hintValues(context), name: uniqueName('Body') }) });
        // Every hostile value in every field with the admin's JWT, the credential that gets furthest;
        // in turn with the others, which mostly stop at the credential check.
        const examples = catalogueInputs(operation, minimal, {
          exhaustive: credential === 'admin JWT',
          offset: CREDENTIALS.indexOf(credential),
        }).map((input) => [input] as [FuzzInput]);
        const property = fc.asyncProperty(inputArbitrary(operation, hints(context)), async (input) => {
          for (const exchange of await send(context, operation, credential, input)) {
            exercised.add(`${key}|${credential}`);
            for (const violation of contract.violations(operation, exchange.response)) {
              const signature = `${exchange.response.status}: ${violation}`;
              const known = KNOWN_FINDINGS.find((entry) => entry.operation === key && entry.violation.test(signature))?.finding;
              const finding = findings.get(signature) ?? { violation: signature, count: 0, example: '', known };
              finding.count++;
              if (!finding.example) {
                finding.example = `${exchange.request}\n      → ${exchange.response.status} ${truncate(exchange.response.text, 400)}`;
              }
              findings.set(signature, finding);
            }
          }
        });
        // Every violation is collected rather than stopping at the first, so one run lists them all.
        // fast-check counts examples in numRuns: the catalogue first, then RUNS generated inputs.
        const details = await fc.check(property, { seed: SEED, numRuns: examples.length + RUNS, examples });
        if (details.failed) {
          throw new Error(
            `${key} with ${credential}: the fuzzer failed; reproduce with FUZZ_SEED=${details.seed} FUZZ_RUNS=${RUNS} ` +
              `(path ${details.counterexamplePath}): ${String(details.errorInstance)}`,
          );
        }
        const unknown = [...findings.values()].filter((finding) => finding.known === undefined);
        if (unknown.length > 0) {
          const list = unknown.map((finding) => `  - ${finding.violation} (×${finding.count}), e.g.\n      ${finding.example}`).join('\n');
          throw new Error(
            `${key} with ${credential} broke the contract; reproduce with FUZZ_SEED=${details.seed} FUZZ_RUNS=${RUNS}:\n${list}`,
          );
        }
      },
      CASE_TIMEOUT_MS,
    );
  });

  it('answers a method a path does not document with 405 and Allow', async () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(DOCUMENT.paths)) {
      const documented = HTTP_METHODS.filter((method) => method.toLowerCase() in item);
      const concrete = path.replace(/\{[^}]+\}/g, String(context.existing.get(collectionOf(path))));
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => !documented.includes(method as never))) {
        const response = await context.api.request(concrete, {
          method,
          headers: { ...bearer(context.adminJwt), 'content-type': 'application/json' },
          body: method === 'GET' ? undefined : '{}',
        });
        const body = (await response.json().catch(() => undefined)) as { code?: string; request_id?: string } | undefined;
        const allow = (response.headers.get('allow') ?? '').split(',').map((name) => name.trim());
        if (response.status !== 405) problems.push(`${method} ${path}: ${response.status}, not 405`);
        else if (!documented.every((name) => allow.includes(name))) problems.push(`${method} ${path}: Allow "${allow.join(', ')}"`);
        if (body?.code !== 'method_not_allowed' || body.request_id !== response.headers.get('x-request-id')) {
          problems.push(`${method} ${path}: body ${JSON.stringify(body)}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('has fuzzed every operation of openapi.json with every credential, or skipped it for a stated reason', () => {
    const keys = new Set(OPERATIONS.map((operation) => operation.key));
    for (const [key, reason] of Object.entries(SKIPPED_OPERATIONS)) {
      expect({ key, documented: keys.has(key), reason: reason.trim().length > 0 }).toEqual({ key, documented: true, reason: true });
    }
    const missing = OPERATIONS.filter((operation) => !(operation.key in SKIPPED_OPERATIONS)).flatMap((operation) =>
      CREDENTIALS.filter((credential) => !exercised.has(`${operation.key}|${credential}`)).map(
        (credential) => `${operation.key} with ${credential}`,
      ),
    );
    expect(missing).toEqual([]);
  });
});
