import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Transactions } from '../src/common/tenancy/transactions.js';
import { WebhookEvents } from '../src/webhooks/webhook-events.js';
import { sendDelivery } from '../src/webhooks/webhook-sender.js';
import { checkWebhookUrl, refusedAddressReason, WebhookUrlRefusedError } from '../src/webhooks/webhook-url-guard.js';
import {
  apiKeyHeader,
  bearer,
  createApiKey,
  createUser,
  createWorkspace,
  inWorkspace,
  json,
  login,
  send,
  type Workspace,
} from './support/factories.js';
import { finishedImport, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';

interface WebhookBody {
  id: number;
  customer: number;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  rotation_overlap_ends_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

interface DeliveryBody {
  id: number;
  event_type: string;
  event_id: string;
  attempt: number;
  status: string;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A receiver as an integrator runs one: node:http on 127.0.0.1, answering each path with the
 * statuses queued for it (then its default), and keeping every request it got.
 */
class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, number[]>();
  private readonly defaults = new Map<string, number>();
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = this.answers.get(path)?.shift() ?? this.defaults.get(path) ?? 200;
        response.writeHead(status, {
          'content-type': 'text/plain',
          ...(status === 302 ? { location: 'http://127.0.0.1:1/' } : {}),
          ...(status === 503 && path === '/busy' ? { 'retry-after': '3600' } : {}),
        });
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, statuses: number[], otherwise = 200): void {
    this.answers.set(path, [...statuses]);
    this.defaults.set(path, otherwise);
  }

  at(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Standard Webhooks verification written out with node:crypto, independent of the code under test and of the library. */
function signaturesOf(headers: IncomingHttpHeaders): string[] {
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((part) => part.length > 0);
}

function verifiedBy(secret: string, request: Received): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`;
  const expected = Buffer.from(createHmac('sha256', key).update(signed).digest('base64'));
  return signaturesOf(request.headers).some((signature) => {
    const [version, value] = signature.split(',');
    const given = Buffer.from(value ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Polls `read` until `done` holds; the deadline only bounds a failure, nothing waits for time to pass. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const WEBHOOK_FIELDS = [
  'created_at',
  'customer',
  'description',
  'disabled_at',
  'disabled_reason',
  'enabled',
  'events',
  'failing_since',
  'id',
  'rotation_overlap_ends_at',
  'updated_at',
  'url',
];
const DELIVERY_FIELDS = [
  'attempt',
  'created_at',
  'duration_ms',
  'error',
  'event_id',
  'event_type',
  'id',
  'next_attempt_at',
  'response_status',
  'status',
];

describe('signed webhooks (SPEC 10.5)', () => {
  let api: TestApp;
  let receiver: Receiver;
  let workspace: Workspace;
  let admin: Record<string, string>;
  let editor: Record<string, string>;
  let viewer: Record<string, string>;
  let writeKey: Record<string, string>;
  let readKey: Record<string, string>;

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
    api = await startTestApp({
      WORKER_CONCURRENCY: '2',
      JOB_POLL_INTERVAL_MS: '100',
      WEBHOOK_RETRY_BASE_SECONDS: '0',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    workspace = await createWorkspace(api);
    admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
    editor = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
    writeKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'write' })).key);
    readKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
  });
  afterAll(async () => {
    await api.close();
    await receiver.close();
  });
  afterEach(() => api.clock.reset());

  async function createWebhook(path: string, events: string[], auth = admin): Promise<WebhookBody> {
    const response = await api.request('/api/v1/webhooks/', json({ url: receiver.url(path), events, description: path }, auth));
    expect(response.status).toBe(201);
    return (await response.json()) as WebhookBody;
  }

  async function deliveries(webhook: number, auth = admin): Promise<DeliveryBody[]> {
    const response = await api.request(`/api/v1/webhooks/${webhook}/deliveries/`, { headers: auth });
    expect(response.status).toBe(200);
    return ((await response.json()) as { results: DeliveryBody[] }).results;
  }

  async function webhookOf(id: number): Promise<WebhookBody> {
    return (await (await api.request(`/api/v1/webhooks/${id}/`, { headers: admin })).json()) as WebhookBody;
  }

  /** What another feature does: emit in its own transaction, in its workspace. */
  function emit(customerId: number, type: 'sync.failed' | 'sync.succeeded' | 'signal.failed', data: object): Promise<void> {
    return inWorkspace(
      api,
      customerId,
      (events) => api.app.get(Transactions).run((transaction) => events.emit(transaction, type, data)),
      WebhookEvents,
    );
  }

  it('shows the secret once on create, never on read, and lists the endpoint', async () => {
    const created = await createWebhook('/once', ['sync.failed']);
    expect(Object.keys(created).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ url: receiver.url('/once'), events: ['sync.failed'], enabled: true, disabled_reason: null });

    const read = await webhookOf(created.id);
    expect(Object.keys(read).sort()).toEqual(WEBHOOK_FIELDS);
    const listed = (await (await api.request('/api/v1/webhooks/?ordering=-id', { headers: viewer })).json()) as {
      results: WebhookBody[];
    };
    expect(listed.results.map((item) => item.id)).toContain(created.id);
    expect(listed.results.every((item) => !('secret' in item))).toBe(true);
    const stored = (await api.dataSource.query('SELECT secret FROM webhooks WHERE id = $1', [created.id])) as { secret: Buffer }[];
    expect(stored[0]!.secret.includes(Buffer.from(created.secret!.slice(6), 'base64'))).toBe(false);
    expect(stored[0]!.secret.toString('utf8')).not.toContain(created.secret!);
  });

  it('lets admins and write keys manage, editors, viewers and read keys only read', async () => {
    const body = { url: receiver.url('/roles'), events: ['import.finished'] };
    for (const auth of [editor, viewer, readKey]) {
      const refused = await api.request('/api/v1/webhooks/', json(body, auth));
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toBe('permission_denied');
    }
    const byKey = await api.request('/api/v1/webhooks/', json(body, writeKey));
    expect(byKey.status).toBe(201);
    const { id } = (await byKey.json()) as WebhookBody;
    for (const auth of [editor, viewer, readKey, writeKey, admin]) {
      expect((await api.request(`/api/v1/webhooks/${id}/`, { headers: auth })).status).toBe(200);
      expect((await api.request(`/api/v1/webhooks/${id}/deliveries/`, { headers: auth })).status).toBe(200);
    }
    for (const auth of [editor, viewer, readKey]) {
      expect((await api.request(`/api/v1/webhooks/${id}/`, send('PATCH', { description: 'x' }, auth))).status).toBe(403);
      expect((await api.request(`/api/v1/webhooks/${id}/rotate-secret/`, send('POST', undefined, auth))).status).toBe(403);
      expect((await api.request(`/api/v1/webhooks/${id}/test/`, send('POST', undefined, auth))).status).toBe(403);
      expect((await api.request(`/api/v1/webhooks/${id}/`, send('DELETE', undefined, auth))).status).toBe(403);
    }
    const patched = await api.request(`/api/v1/webhooks/${id}/`, send('PATCH', { description: 'by key' }, writeKey));
    expect(((await patched.json()) as WebhookBody).description).toBe('by key');
    expect((await api.request(`/api/v1/webhooks/${id}/`, send('DELETE', undefined, writeKey))).status).toBe(204);
    expect((await api.request(`/api/v1/webhooks/${id}/`, { headers: admin })).status).toBe(404);
  });

  it('refuses bad input with the problem body under the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ url: receiver.url('/x'), events: [] }, 'events'],
      [{ url: receiver.url('/x'), events: ['sync.exploded'] }, 'events'],
      [{ url: receiver.url('/x'), events: ['sync.failed', 'sync.failed'] }, 'events'],
      [{ url: receiver.url('/x'), events: 'sync.failed' }, 'events'],
      [{ url: receiver.url('/x') }, 'events'],
      [{ url: 'not a url', events: ['sync.failed'] }, 'url'],
      [{ url: 'ftp://127.0.0.1/x', events: ['sync.failed'] }, 'url'],
      [{ url: 'http://user:pass@127.0.0.1/x', events: ['sync.failed'] }, 'url'],
      [{ url: `http://127.0.0.1/${'a'.repeat(2100)}`, events: ['sync.failed'] }, 'url'],
      [{ events: ['sync.failed'] }, 'url'],
    ];
    for (const [body, field] of cases) {
      const response = await api.request('/api/v1/webhooks/', json(body, admin));
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      const problem = (await response.json()) as { code: string; errors: Record<string, string[]> };
      expect(problem.code).toBe('validation_error');
      expect(Object.keys(problem.errors)).toContain(field);
    }
    const { id } = await createWebhook('/patch-bad', ['sync.failed']);
    for (const body of [{ enabled: 'yes' }, { events: null }, { url: 'gopher://x' }]) {
      expect((await api.request(`/api/v1/webhooks/${id}/`, send('PATCH', body, admin))).status).toBe(400);
    }
  });

  it('signs a test event as Standard Webhooks, verifiable with HMAC-SHA256 and with the library', async () => {
    const created = await createWebhook('/signed', ['sync.failed']);
    const response = await api.request(`/api/v1/webhooks/${created.id}/test/`, send('POST', undefined, admin));
    expect(response.status).toBe(202);
    const queued = (await response.json()) as DeliveryBody;
    expect(Object.keys(queued).sort()).toEqual(DELIVERY_FIELDS);
    expect(queued).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempt: 0 });

    const [done] = await until(
      () => deliveries(created.id),
      (items) => items[0]?.status === 'succeeded',
    );
    expect(done).toMatchObject({
      id: queued.id,
      attempt: 1,
      status: 'succeeded',
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
    expect(done!.duration_ms).toBeGreaterThanOrEqual(0);

    const [request] = receiver.at('/signed');
    expect(request!.headers['webhook-id']).toBe(queued.event_id);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    expect(signaturesOf(request!.headers)).toHaveLength(1);
    expect(verifiedBy(created.secret!, request!)).toBe(true);
    expect(verifiedBy(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request!)).toBe(false);
    const payload = new StandardWebhook(created.secret!).verify(request!.body, request!.headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: WebhookBody;
    };
    expect(payload.type).toBe('webhook.test');
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(payload.data).toMatchObject({ id: created.id, url: created.url });
    expect(payload.data).not.toHaveProperty('secret');
  });

  it('delivers import.finished when an import ends, only to the endpoints subscribed to it', async () => {
    const listening = await createWebhook('/imports', ['import.finished']);
    const deaf = await createWebhook('/not-imports', ['sync.failed']);
    const upload = await postImport(api, admin, 'external_id,email\nw-1,webhook-one@example.com\n');
    expect(upload.status).toBe(202);
    const { id } = (await upload.json()) as { id: number };
    const finished = await finishedImport(api, admin, id);
    expect(finished.status).toBe('succeeded');

    const [delivery] = await until(
      () => deliveries(listening.id),
      (items) => items[0]?.status === 'succeeded',
    );
    expect(delivery!.event_type).toBe('import.finished');
    // Both endpoints' deliveries would have been written by the one statement in the merge's transaction.
    expect(await deliveries(deaf.id)).toEqual([]);
    const [request] = receiver.at('/imports');
    expect(verifiedBy(listening.secret!, request!)).toBe(true);
    const body = JSON.parse(request!.body) as { type: string; data: { id: number; status: string; rows_accepted: number } };
    expect(body).toMatchObject({ type: 'import.finished', data: { id, status: 'succeeded', rows_accepted: 1 } });
  });

  it('retries after 500s with the same event id, each try signed, until a 2xx', async () => {
    const created = await createWebhook('/flaky', ['sync.failed']);
    receiver.answer('/flaky', [500, 503, 302]);
    await emit(workspace.customerId, 'sync.failed', { id: 7, status: 'failed', error_code: 'provider_error' });

    const [delivery] = await until(
      () => deliveries(created.id),
      (items) => items[0]?.status === 'succeeded',
    );
    expect(delivery).toMatchObject({ event_type: 'sync.failed', attempt: 4, status: 'succeeded', response_status: 200, error: null });
    const tries = receiver.at('/flaky');
    expect(tries).toHaveLength(4);
    expect(new Set(tries.map((request) => request.headers['webhook-id']))).toEqual(new Set([delivery!.event_id]));
    expect(new Set(tries.map((request) => request.body)).size).toBe(1);
    for (const request of tries) expect(verifiedBy(created.secret!, request)).toBe(true);
    expect(JSON.parse(tries[0]!.body)).toMatchObject({ type: 'sync.failed', data: { id: 7, error_code: 'provider_error' } });
    expect((await webhookOf(created.id)).failing_since).toBeNull();

    const metrics = await (await api.request('/metrics')).text();
    const counted = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    expect(counted('webhook_deliveries_total{event_type="sync.failed",outcome="succeeded"}')).toBeGreaterThanOrEqual(1);
    expect(counted('webhook_delivery_attempts_total{event_type="sync.failed",outcome="failed"}')).toBeGreaterThanOrEqual(3);
  });

  it('records a failing attempt in words and when the next one runs', async () => {
    const created = await createWebhook('/down', ['signal.failed']);
    // Nothing listens there: every try is refused.
    await api.request(`/api/v1/webhooks/${created.id}/`, send('PATCH', { url: 'http://127.0.0.1:1/down' }, admin));
    await emit(workspace.customerId, 'signal.failed', { id: 3 });
    const [failing] = await until(
      () => deliveries(created.id),
      (items) => (items[0]?.attempt ?? 0) >= 2,
    );
    expect(failing!.status).toBe('pending');
    expect(failing!.response_status).toBeNull();
    expect(failing!.error).toBe('The connection was refused.');
    expect((await webhookOf(created.id)).failing_since).not.toBeNull();

    // Turned off while it waits: nothing more is sent, and the delivery says why it ended.
    await api.request(`/api/v1/webhooks/${created.id}/`, send('PATCH', { enabled: false }, admin));
    const [ended] = await until(
      () => deliveries(created.id),
      (items) => items[0]?.status === 'failed',
    );
    expect(ended).toMatchObject({
      next_attempt_at: null,
      error: 'The endpoint was disabled before this delivery got through; nothing more is sent.',
    });
    await api.request(`/api/v1/webhooks/${created.id}/`, send('DELETE', undefined, admin));
  });

  it("waits as long as the endpoint's Retry-After asks before the next attempt", async () => {
    const created = await createWebhook('/busy', ['sync.failed']);
    receiver.answer('/busy', [], 503);
    await emit(workspace.customerId, 'sync.failed', { id: 31 });
    const [waiting] = await until(
      () => deliveries(created.id),
      (items) => items[0]?.attempt === 1,
    );
    expect(waiting).toMatchObject({ status: 'pending', response_status: 503 });
    expect(new Date(waiting!.next_attempt_at!).getTime() - Date.now()).toBeGreaterThan(3500 * 1000);
    await api.request(`/api/v1/webhooks/${created.id}/`, send('DELETE', undefined, admin));
  });

  it('stops retrying after 24 hours and disables an endpoint that failed every attempt for 24 hours', async () => {
    const created = await createWebhook('/broken', ['sync.failed']);
    receiver.answer('/broken', [], 500);
    await emit(workspace.customerId, 'sync.failed', { id: 8 });
    await until(
      () => deliveries(created.id),
      (items) => (items[0]?.attempt ?? 0) >= 2,
    );
    let webhook = await webhookOf(created.id);
    expect(webhook).toMatchObject({ enabled: true, disabled_reason: null });
    expect(webhook.failing_since).not.toBeNull();

    // A day passes: the event and the run of failures both began 25 hours ago. One transaction, so
    // an attempt running meanwhile sees both moved or neither; the endpoint's row first, in the
    // order the delivery job locks them.
    await api.dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = $1`, [created.id]);
      await manager.query(`UPDATE webhook_deliveries SET created_at = created_at - interval '25 hours' WHERE webhook_id = $1`, [
        created.id,
      ]);
    });

    const [failed] = await until(
      () => deliveries(created.id),
      (items) => items[0]?.status === 'failed',
    );
    expect(failed).toMatchObject({ status: 'failed', response_status: 500, next_attempt_at: null });
    webhook = await webhookOf(created.id);
    expect(webhook).toMatchObject({ enabled: false, disabled_reason: 'failing_for_24_hours' });
    expect(webhook.disabled_at).not.toBeNull();

    // Events while it is disabled are not delivered to it.
    await emit(workspace.customerId, 'sync.failed', { id: 9 });
    expect((await deliveries(created.id)).length).toBe(1);

    receiver.answer('/broken', [], 200);
    const enabled = await api.request(`/api/v1/webhooks/${created.id}/`, send('PATCH', { enabled: true }, admin));
    expect((await enabled.json()) as WebhookBody).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    const off = await api.request(`/api/v1/webhooks/${created.id}/`, send('PATCH', { enabled: false }, admin));
    expect((await off.json()) as WebhookBody).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_user' });
  });

  it('signs with the old and the new secret for 24 hours after a rotation, then with the new one only', async () => {
    const created = await createWebhook('/rotated', ['sync.succeeded']);
    const rotated = await api.request(`/api/v1/webhooks/${created.id}/rotate-secret/`, send('POST', undefined, admin));
    expect(rotated.status).toBe(200);
    const { secret, rotation_overlap_ends_at } = (await rotated.json()) as { secret: string; rotation_overlap_ends_at: string };
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(created.secret);
    expect(new Date(rotation_overlap_ends_at).getTime() - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect((await webhookOf(created.id)).rotation_overlap_ends_at).toBe(rotation_overlap_ends_at);

    await emit(workspace.customerId, 'sync.succeeded', { id: 11 });
    await until(
      async () => receiver.at('/rotated').length,
      (count) => count === 1,
    );
    const [during] = receiver.at('/rotated');
    expect(signaturesOf(during!.headers)).toHaveLength(2);
    expect(verifiedBy(secret, during!)).toBe(true);
    expect(verifiedBy(created.secret!, during!)).toBe(true);

    api.clock.advance(25 * 3600 * 1000);
    await emit(workspace.customerId, 'sync.succeeded', { id: 12 });
    await until(
      async () => receiver.at('/rotated').length,
      (count) => count === 2,
    );
    const after = receiver.at('/rotated')[1]!;
    expect(signaturesOf(after.headers)).toHaveLength(1);
    expect(verifiedBy(secret, after)).toBe(true);
    expect(verifiedBy(created.secret!, after)).toBe(false);
  });

  it('keeps each workspace to its own webhooks and events', async () => {
    const mine = await createWebhook('/tenant-a', ['sync.failed']);
    const other = await createWorkspace(api);
    const otherAdmin = bearer((await login(api, await createUser(api, other, { role: 'admin' }))).access);
    const theirs = await api.request('/api/v1/webhooks/', json({ url: receiver.url('/tenant-b'), events: ['sync.failed'] }, otherAdmin));
    const theirId = ((await theirs.json()) as WebhookBody).id;

    for (const [method, path] of [
      ['GET', `/api/v1/webhooks/${mine.id}/`],
      ['GET', `/api/v1/webhooks/${mine.id}/deliveries/`],
      ['PATCH', `/api/v1/webhooks/${mine.id}/`],
      ['DELETE', `/api/v1/webhooks/${mine.id}/`],
      ['POST', `/api/v1/webhooks/${mine.id}/rotate-secret/`],
      ['POST', `/api/v1/webhooks/${mine.id}/test/`],
    ] as const) {
      const response = await api.request(path, send(method, method === 'PATCH' ? { description: 'x' } : undefined, otherAdmin));
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
    }
    const listed = (await (await api.request('/api/v1/webhooks/?page_size=100', { headers: otherAdmin })).json()) as {
      results: WebhookBody[];
    };
    expect(listed.results.map((item) => item.id)).toEqual([theirId]);

    await emit(workspace.customerId, 'sync.failed', { id: 21 });
    await until(
      () => deliveries(mine.id),
      (items) => items[0]?.status === 'succeeded',
    );
    expect(await deliveries(theirId, otherAdmin)).toEqual([]);
    expect(receiver.at('/tenant-b')).toEqual([]);
    expect((await webhookOf(mine.id)).description).toBe('/tenant-a');
  });

  it('pins the connection to the address it resolved (a name that rebinds cannot move it)', async () => {
    receiver.answer('/pinned', [], 204);
    // No resolver on this machine knows the name: the request can only have gone where our lookup said.
    const outcome = await sendDelivery(new URL(`http://rebinding.invalid:${receiver.port}/pinned`), {}, '{}', {
      timeoutMs: 2000,
      policy: { production: false },
      resolve: async () => ['127.0.0.1'],
    });
    expect(outcome).toMatchObject({ succeeded: true, responseStatus: 204, error: null });
    expect(receiver.at('/pinned')).toHaveLength(1);

    // In production the same name, now answering a loopback address, is refused before any connection.
    let answers = ['93.184.215.14'];
    const rebinding = async () => answers;
    await expect(checkWebhookUrl('https://rebinding.invalid/hook', { production: true }, rebinding)).resolves.toBeInstanceOf(URL);
    answers = ['127.0.0.1'];
    const refused = await sendDelivery(new URL(`https://rebinding.invalid:${receiver.port}/pinned`), {}, '{}', {
      timeoutMs: 2000,
      policy: { production: true },
      resolve: rebinding,
    });
    expect(refused).toMatchObject({ succeeded: false, responseStatus: null });
    expect(refused.error).toMatch(/resolves to 127\.0\.0\.1, which is a loopback address/);
    expect(receiver.at('/pinned')).toHaveLength(1);
  });
});

describe('webhook URLs in production (SSRF, SPEC 10.5)', () => {
  let api: TestApp;
  let admin: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ NODE_ENV: 'production', ALLOWED_HOSTS: '127.0.0.1' });
    admin = bearer((await login(api, await createUser(api, await createWorkspace(api), { role: 'admin' }))).access);
  });
  afterAll(() => api.close());

  const REFUSED: [string, string, RegExp][] = [
    ['plain http', 'http://93.184.215.14/hook', /must use https/],
    ['loopback', 'https://127.0.0.1/hook', /loopback/],
    ['loopback (another of 127/8)', 'https://127.1.2.3/hook', /loopback/],
    ['localhost by name', 'https://localhost/hook', /loopback/],
    ['private 10/8', 'https://10.0.0.5/hook', /private/],
    ['private 172.16/12', 'https://172.16.3.4/hook', /private/],
    ['private 192.168/16', 'https://192.168.1.10/hook', /private/],
    ['carrier-grade NAT 100.64/10', 'https://100.64.0.1/hook', /carrier-grade NAT/],
    ['link-local / metadata', 'https://169.254.169.254/latest/meta-data/', /link-local/],
    ['unspecified', 'https://0.0.0.0/hook', /unspecified/],
    ['broadcast', 'https://255.255.255.255/hook', /broadcast/],
    ['multicast', 'https://224.0.0.1/hook', /multicast/],
    ['IPv6 loopback', 'https://[::1]/hook', /loopback/],
    ['IPv6 unspecified', 'https://[::]/hook', /unspecified/],
    ['IPv6 unique local fc00::/7', 'https://[fd12:3456::1]/hook', /unique local/],
    ['IPv6 link-local fe80::/10', 'https://[fe80::1]/hook', /link-local/],
    ['IPv6 multicast', 'https://[ff02::1]/hook', /multicast/],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/hook', /private/],
    ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/hook', /link-local/],
    ['NAT64 of a private address', 'https://[64:ff9b::a00:1]/hook', /NAT64/],
  ];

  it.each(REFUSED)('refuses %s on create', async (_name, url, reason) => {
    const response = await api.request('/api/v1/webhooks/', json({ url, events: ['sync.failed'] }, admin));
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { code: string; errors: Record<string, string[]> };
    expect(problem.code).toBe('validation_error');
    expect(problem.errors.url?.[0]).toMatch(reason);
  });

  it('refuses a private address on update too, and takes a public https one', async () => {
    const created = await api.request('/api/v1/webhooks/', json({ url: 'https://93.184.215.14/hook', events: ['sync.failed'] }, admin));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as WebhookBody;
    const moved = await api.request(`/api/v1/webhooks/${id}/`, send('PATCH', { url: 'https://[::ffff:192.168.0.1]/hook' }, admin));
    expect(moved.status).toBe(400);
    expect(((await moved.json()) as { errors: Record<string, string[]> }).errors.url?.[0]).toMatch(/private/);
  });

  it('classifies addresses with every refused range and lets public ones through', () => {
    for (const address of ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111']) expect(refusedAddressReason(address)).toBeUndefined();
    for (const address of [
      '127.0.0.1',
      '10.1.1.1',
      '100.100.1.1',
      '169.254.0.1',
      '::1',
      'fe80::2',
      'fc00::2',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      expect(refusedAddressReason(address)).toBeDefined();
    expect(new WebhookUrlRefusedError('x').name).toBe('WebhookUrlRefusedError');
  });
});
