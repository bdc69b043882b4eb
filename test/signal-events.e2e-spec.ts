import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { type FakeGoogleAds, type FakeMetaAds, startFakeGoogleAds, startFakeMetaAds } from './support/fake-ad-platforms.js';
import { SignalDeliveryService } from '../src/signal-events/signal-delivery.service.js';
import { createTokenConnection, eventually } from './support/signal-events.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Signal events and their delivery (SPEC 10.4), through the API into the real app and its job
 * workers, against local servers that speak Google's events:ingest and Meta's Conversions API over
 * HTTP (test/support/fake-ad-platforms.ts). Expected hashes are computed here, by hand, from the
 * platforms' published normal forms.
 */

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Delivery {
  received: number;
  delivered: number;
  failed: number;
  pending: number;
  last_delivered_at: string | null;
  last_error: string | null;
}
interface SignalBody {
  id: number;
  name: string;
  status: number;
  status_reason: string | null;
  delivery: Delivery;
}
interface EventBody {
  id: number;
  event_id: string;
  received_at: string;
  status: string;
  error: string | null;
  attempts: number;
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

describe('signal events (SPEC 10.4)', () => {
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;
  let googleConnection: { id: number; externalAccountId: string };
  let metaConnection: { id: number; externalAccountId: string };
  let conversionAction = 5_550_000;
  let pixel = 7_770_000;

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    api = await startTestApp({
      GOOGLE_DATA_MANAGER_URL: google.url,
      META_GRAPH_URL: `${meta.url}/v25.0`,
      META_APP_ID: meta.appId,
      META_APP_SECRET: meta.appSecret,
      WORKER_CONCURRENCY: '2',
      JOB_POLL_INTERVAL_MS: '100',
      SYNC_RETRY_BASE_SECONDS: '0',
      SYNC_MAX_ATTEMPTS: '3',
    });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    googleConnection = await createTokenConnection(api, workspace, 'google_ads', google.issueAccessToken());
    google.accounts = [{ id: googleConnection.externalAccountId, name: 'Shop' }];
    metaConnection = await createTokenConnection(api, workspace, 'meta_ads', meta.issueAccessToken());
    meta.accounts = [{ account_id: metaConnection.externalAccountId, name: 'Shop' }];
  });
  afterAll(async () => {
    await api.close();
    await google.close();
    await meta.close();
  });

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers = auth) => {
    const response = await api.request(path, send(method, body, headers));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  async function googleSignal(status = 1): Promise<{ id: number; conversionActionId: string }> {
    const conversionActionId = String(++conversionAction);
    google.events.conversionActions.set(conversionActionId, googleConnection.externalAccountId);
    const { status: code, body } = await call('POST', '/api/v1/signals/', {
      name: `Google ${conversionActionId}`,
      signal_type: 'conversion',
      connection: googleConnection.id,
      config: { conversion_action_id: conversionActionId },
      status,
    });
    expect(code).toBe(201);
    return { id: body.id as number, conversionActionId };
  }

  async function metaSignal(config: Record<string, unknown> = {}): Promise<{ id: number; pixelId: string }> {
    const pixelId = String(++pixel);
    meta.conversions.pixels.add(pixelId);
    const { status, body } = await call('POST', '/api/v1/signals/', {
      name: `Meta ${pixelId}`,
      signal_type: 'value',
      connection: metaConnection.id,
      config: { pixel_id: pixelId, event_name: 'Purchase', action_source: 'system_generated', ...config },
      status: 1,
    });
    expect(status).toBe(201);
    return { id: body.id as number, pixelId };
  }

  const postEvents = (signalId: number, events: unknown[], headers = auth) =>
    call('POST', `/api/v1/signals/${signalId}/events/`, { events }, headers);
  const signalOf = async (id: number) => (await call('GET', `/api/v1/signals/${id}/`)).body as SignalBody;
  const settled = (id: number, what: string, done: (signal: SignalBody) => boolean) => eventually(() => signalOf(id), done, what);
  const eventsOf = async (id: number, query = '') =>
    ((await call('GET', `/api/v1/signals/${id}/events/?page_size=100${query}`)).body as { results: EventBody[] }).results;

  describe('signal config per platform', () => {
    it('refuses unknown keys and wrong types under config.<key> once a connection is set, and missing keys only on activation', async () => {
      const base = { name: 'Config', signal_type: 'conversion', connection: googleConnection.id };
      const unknown = await call('POST', '/api/v1/signals/', { ...base, config: { conversion_action: 'purchase' } });
      expect(unknown.status).toBe(400);
      expect(Object.keys(unknown.body.errors)).toEqual(['config.conversion_action']);
      const wrongType = await call('POST', '/api/v1/signals/', { ...base, config: { conversion_action_id: 123 } });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.errors['config.conversion_action_id']).toEqual(['Not a valid string.']);

      const draft = await call('POST', '/api/v1/signals/', { ...base, config: {} });
      expect(draft.status).toBe(201);
      const activate = await call('PATCH', `/api/v1/signals/${draft.body.id}/`, { status: 1 });
      expect(activate.status).toBe(400);
      expect(activate.body.errors).toEqual({ 'config.conversion_action_id': ['This field is required.'] });

      const metaDraft = await call('POST', '/api/v1/signals/', {
        name: 'Meta config',
        signal_type: 'value',
        connection: metaConnection.id,
        config: { pixel_id: '123', action_source: 'telepathy' },
      });
      expect(metaDraft.status).toBe(400);
      expect(Object.keys(metaDraft.body.errors)).toEqual(['config.action_source']);
      const metaActivate = await call('POST', '/api/v1/signals/', {
        name: 'Meta config',
        signal_type: 'value',
        connection: metaConnection.id,
        config: { pixel_id: '123' },
        status: 1,
      });
      expect(metaActivate.status).toBe(400);
      expect(Object.keys(metaActivate.body.errors).sort()).toEqual(['config.action_source', 'config.event_name']);
      // Without a connection the settings are the advertiser's own notes, as before.
      expect(
        (await call('POST', '/api/v1/signals/', { name: 'No connection', signal_type: 'score', config: { anything: 1 } })).status,
      ).toBe(201);
    });
  });

  describe('signal config of an active signal', () => {
    it('takes a new description on an active signal whose settings predate SPEC 10.4, and refuses settings left incomplete', async () => {
      const signal = await metaSignal();
      // As a signal activated before the platforms' settings existed: active, with none of them.
      await api.dataSource.query(`UPDATE signals SET config = '{}'::jsonb WHERE id = $1`, [signal.id]);
      const renamed = await call('PATCH', `/api/v1/signals/${signal.id}/`, { description: 'Renamed while active' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ status: 1, description: 'Renamed while active', config: {} });
      // New settings for it must be complete, since it is active.
      const partial = await call('PATCH', `/api/v1/signals/${signal.id}/`, { config: { pixel_id: signal.pixelId } });
      expect(partial.status).toBe(400);
      expect(Object.keys(partial.body.errors).sort()).toEqual(['config.action_source', 'config.event_name']);
    });
  });

  describe('accepting events', () => {
    it('answers 409 for a draft or archived signal, and 404 for another workspace’s signal', async () => {
      const draft = await googleSignal(0);
      expect((await postEvents(draft.id, [{ event_id: 'x', event_time: minutesAgo(1), gclid: 'abc' }])).status).toBe(409);
      const archived = await googleSignal(4);
      expect((await postEvents(archived.id, [])).status).toBe(409);
      const other = await createWorkspace(api);
      const stranger = bearer((await login(api, await createUser(api, other, { role: 'admin' }))).access);
      expect((await postEvents(draft.id, [], stranger)).status).toBe(404);
      expect((await call('GET', `/api/v1/signals/${draft.id}/events/`, undefined, stranger)).status).toBe(404);
    });

    it('rejects bad events by index with their reasons and accepts the rest', async () => {
      const signal = await metaSignal();
      const { status, body } = await postEvents(signal.id, [
        { event_id: 'ok-1', event_time: minutesAgo(5), value: 10, currency: 'EUR', identifiers: { email: 'ok@example.com' } },
        { event_id: 'old', event_time: new Date(Date.now() - 8 * 86_400_000).toISOString(), fbp: 'fb.1.1700000000000.123' },
        { event_id: 'future', event_time: new Date(Date.now() + 3_600_000).toISOString(), fbp: 'fb.1.1700000000000.123' },
        { event_id: 'money', event_time: minutesAgo(1), value: -1, currency: 'EURO', fbp: 'fb.1.1700000000000.123' },
        { event_id: 'who', event_time: minutesAgo(1), identifiers: { email: 'not-an-email' }, client_ip_address: '999.1.1.1' },
        { event_time: 'yesterday', surprise: true },
        { event_id: 'nobody', event_time: minutesAgo(1) },
        'not an event',
        // No such day: not read as March 2.
        { event_id: 'feb-30', event_time: '2026-02-30T10:00:00Z', fbp: 'fb.1.1700000000000.123' },
      ]);
      expect(status).toBe(202);
      expect(body).toEqual({
        accepted: 1,
        duplicates: 0,
        rejected: [
          { index: 1, errors: { event_time: ['event_time_too_old'] } },
          { index: 2, errors: { event_time: ['event_time_in_future'] } },
          { index: 3, errors: { value: ['invalid_value'], currency: ['invalid_currency'] } },
          { index: 4, errors: { client_ip_address: ['invalid_client_ip_address'], 'identifiers.email': ['invalid_email'] } },
          {
            index: 5,
            errors: {
              surprise: ['unknown_field'],
              event_id: ['required'],
              event_time: ['invalid_event_time'],
              identifiers: ['no_match_key'],
            },
          },
          { index: 6, errors: { identifiers: ['no_match_key'] } },
          { index: 7, errors: { event: ['invalid_event'] } },
          { index: 8, errors: { event_time: ['invalid_event_time'] } },
        ],
      });
      const tooMany = await postEvents(
        signal.id,
        Array.from({ length: 1001 }, () => ({})),
      );
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.errors.events).toEqual(['Ensure this list has no more than 1000 items.']);
    });

    it('accepts each event once under 20 concurrent identical posts, stores no raw identifier, and delivers each once', async () => {
      const signal = await googleSignal();
      const events = Array.from({ length: 10 }, (_, index) => ({
        event_id: `same-${index}`,
        event_time: minutesAgo(10),
        identifiers: { email: `Person.${index}@Example.com`, phone: '+44 7700 900123' },
      }));
      const answers = await Promise.all(Array.from({ length: 20 }, () => postEvents(signal.id, events)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(202));
      expect(answers.reduce((sum, answer) => sum + (answer.body.accepted as number), 0)).toBe(10);
      expect(answers.reduce((sum, answer) => sum + (answer.body.duplicates as number), 0)).toBe(190);
      const done = await settled(signal.id, 'delivered', (body) => body.delivery.delivered === 10);
      expect(done.delivery).toMatchObject({ received: 10, delivered: 10, failed: 0, pending: 0, last_error: null });
      // A PATCH that changes nothing answers the signal as the detail does, delivery counts included.
      const unchanged = await call('PATCH', `/api/v1/signals/${signal.id}/`, { name: done.name });
      expect(unchanged.status).toBe(200);
      expect(unchanged.body.delivery).toEqual(done.delivery);
      const sent = google.events.requests.filter((request) => request.conversionActionId === signal.conversionActionId);
      expect(sent.flatMap((request) => request.events.map((event) => event.transactionId)).sort()).toEqual(
        events.map((event) => event.event_id).sort(),
      );
      const stored: { google: Buffer; meta: Buffer; text: string }[] = await api.dataSource.query(
        `SELECT google_user_data AS google, meta_user_data AS meta, row_to_json(e)::text AS text FROM signal_events e WHERE signal_id = $1`,
        [signal.id],
      );
      expect(stored).toHaveLength(10);
      // The phone in every spelling it could be stored in: a bare '7700' also turns up in a timestamp's microseconds.
      for (const row of stored) {
        expect(row.google.length % 33).toBe(0);
        expect(row.text.toLowerCase()).not.toMatch(/example\.com|7700 900123|7700900123|person/);
      }
    });
  });

  describe('delivery to Google (events:ingest)', () => {
    it('sends the exact Data Manager payload: Google hash forms, clear address parts, gclid, value, encoding HEX', async () => {
      const signal = await googleSignal();
      const at = minutesAgo(30);
      const { body } = await postEvents(signal.id, [
        {
          event_id: 'order-1',
          event_time: at,
          value: 49.9,
          currency: 'EUR',
          gclid: 'Cj0KCQiA-test_gclid',
          identifiers: {
            email: 'Ada.Lovelace+news@GMAIL.com',
            phone: '+44 7700 900123',
            first_name: 'Ada',
            last_name: 'Lovelace',
            country_code: 'gb',
            postal_code: 'SW1A 1AA',
          },
          client_ip_address: '203.0.113.7',
          client_user_agent: 'Mozilla/5.0',
          event_source_url: 'https://shop.example.com/done',
        },
        { event_id: 'order-2', event_time: at, gclid: 'gclid-only' },
      ]);
      expect(body).toMatchObject({ accepted: 2, rejected: [] });
      await settled(signal.id, 'delivered', (detail) => detail.delivery.delivered === 2);
      const request = google.events.requests.find((candidate) => candidate.conversionActionId === signal.conversionActionId)!;
      expect(request).toMatchObject({ operatingAccountId: googleConnection.externalAccountId, encoding: 'HEX', validateOnly: false });
      expect(request.events).toEqual([
        {
          transactionId: 'order-1',
          eventTimestamp: new Date(at).toISOString(),
          conversionValue: 49.9,
          currency: 'EUR',
          eventSource: 'WEB',
          userData: {
            userIdentifiers: [
              { emailAddress: sha('adalovelace@gmail.com') },
              { phoneNumber: sha('+447700900123') },
              { address: { givenName: sha('ada'), familyName: sha('lovelace'), regionCode: 'GB', postalCode: 'SW1A 1AA' } },
            ],
          },
          adIdentifiers: { gclid: 'Cj0KCQiA-test_gclid' },
          eventDeviceInfo: { userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7' },
        },
        { transactionId: 'order-2', eventTimestamp: new Date(at).toISOString(), adIdentifiers: { gclid: 'gclid-only' } },
      ]);
      const listed = await eventsOf(signal.id);
      expect(listed.map((event) => [event.event_id, event.status])).toEqual([
        ['order-2', 'delivered'],
        ['order-1', 'delivered'],
      ]);
      expect(JSON.stringify(listed)).not.toMatch(/gclid|Lovelace|203\.0\.113|Mozilla|identifiers/i);
    });

    it('retries a 429 (honouring Retry-After) and a 503, then delivers', async () => {
      const signal = await googleSignal();
      google.events.failNext({ kind: 'rate_limited', retryAfterSeconds: 1 });
      google.events.failNext({ kind: 'server_error', status: 503 });
      const callsBefore = google.events.calls.length;
      await postEvents(signal.id, [{ event_id: 'retry-1', event_time: minutesAgo(1), gclid: 'retry-gclid' }]);
      const done = await settled(signal.id, 'delivered after retries', (detail) => detail.delivery.delivered === 1);
      expect(google.events.calls.slice(callsBefore).map((entry) => entry.status)).toEqual([429, 503, 200]);
      expect(done.delivery.last_error).toMatch(/^server_error: /);
      const metrics = await (await api.request('/metrics')).text();
      expect(metrics).toMatch(/signal_delivery_throttled_total\{platform="google_ads"\} [1-9]/);
      expect(metrics).toMatch(/signal_events_sent_total\{platform="google_ads"\} [1-9]/);
    });

    it('fails the events of a request that keeps failing after SYNC_MAX_ATTEMPTS tries', async () => {
      const signal = await googleSignal();
      google.events.failNext({ kind: 'server_error', status: 500 }, { times: 3 });
      await postEvents(signal.id, [{ event_id: 'doomed', event_time: minutesAgo(1), gclid: 'doomed-gclid' }]);
      await settled(signal.id, 'failed after 3 tries', (detail) => detail.delivery.failed === 1);
      const [event] = await eventsOf(signal.id);
      expect(event).toMatchObject({ event_id: 'doomed', status: 'failed', attempts: 2 });
      expect(event!.error).toMatch(/^server_error: .*\(after 3 tries\)$/);
    });

    it('turns the signal failed with the reason when Google refuses the conversion action, and delivers what it held on reactivation', async () => {
      const signal = await googleSignal();
      google.events.conversionActions.delete(signal.conversionActionId);
      await postEvents(signal.id, [{ event_id: 'held-1', event_time: minutesAgo(2), gclid: 'held-gclid' }]);
      const failed = await settled(signal.id, 'failed', (detail) => detail.status === 3);
      expect(failed.status_reason).toMatch(/^destination_refused: The conversion action was not found\./);
      expect(failed.delivery).toMatchObject({ received: 1, pending: 1, delivered: 0 });
      const held = await eventually(
        () => eventsOf(signal.id, '&status=held'),
        (events) => events.length === 1,
        'held',
      );
      expect(held.map((event) => event.event_id)).toEqual(['held-1']);
      // A failed signal still takes events and holds them.
      expect((await postEvents(signal.id, [{ event_id: 'held-2', event_time: minutesAgo(1), gclid: 'held-gclid' }])).body.accepted).toBe(1);

      google.events.conversionActions.set(signal.conversionActionId, googleConnection.externalAccountId);
      const resumed = await call('PATCH', `/api/v1/signals/${signal.id}/`, { status: 1 });
      expect(resumed.status).toBe(200);
      expect(resumed.body.status_reason).toBeNull();
      await settled(signal.id, 'held events delivered', (detail) => detail.delivery.delivered === 2);
    });
  });

  describe('delivery to Meta (Conversions API)', () => {
    it('sends the exact Conversions API payload: Meta hash forms, clear click and browser ids, test_event_code', async () => {
      const signal = await metaSignal({ test_event_code: 'TEST4242' });
      const at = minutesAgo(15);
      await postEvents(signal.id, [
        {
          event_id: 'purchase-1',
          event_time: at,
          value: 12.5,
          currency: 'USD',
          external_id: 'crm-42',
          identifiers: {
            email: ' Ada.Lovelace+news@GMAIL.com ',
            phone: '+44 7700 900123',
            first_name: 'Ada',
            last_name: "O'Lovelace",
            country_code: 'gb',
            postal_code: 'SW1A 1AA',
          },
          client_ip_address: '2001:db8::1',
          client_user_agent: 'Mozilla/5.0',
          fbc: 'fb.1.1700000000000.AbCdEf',
          fbp: 'fb.1.1700000000000.1234567890',
        },
      ]);
      await settled(signal.id, 'delivered', (detail) => detail.delivery.delivered === 1);
      const request = meta.conversions.requests.find((candidate) => candidate.pixelId === signal.pixelId)!;
      expect(request.testEventCode).toBe('TEST4242');
      expect(request.data).toEqual([
        {
          event_name: 'Purchase',
          event_time: Math.floor(Date.parse(at) / 1000),
          event_id: 'purchase-1',
          action_source: 'system_generated',
          user_data: {
            em: [sha('ada.lovelace+news@gmail.com')],
            ph: [sha('447700900123')],
            fn: sha('ada'),
            ln: sha('olovelace'),
            zp: sha('sw1a1aa'),
            country: sha('gb'),
            external_id: [sha('crm-42')],
            client_ip_address: '2001:db8::1',
            client_user_agent: 'Mozilla/5.0',
            fbc: 'fb.1.1700000000000.AbCdEf',
            fbp: 'fb.1.1700000000000.1234567890',
          },
          custom_data: { value: 12.5, currency: 'usd' },
        },
      ]);
    });

    it('isolates the one event Meta refuses by splitting the batch, and delivers the others', async () => {
      const signal = await metaSignal();
      const events = Array.from({ length: 8 }, (_, index) => ({
        event_id: `batch-${index}`,
        event_time: minutesAgo(3),
        fbp: 'fb.1.1700000000000.1234567890',
        // Meta refuses a malformed click id, which is kept as given and not checked here.
        ...(index === 5 && { fbc: 'not-a-click-id' }),
      }));
      expect((await postEvents(signal.id, events)).body).toMatchObject({ accepted: 8, rejected: [] });
      const done = await settled(signal.id, 'split', (detail) => detail.delivery.delivered + detail.delivery.failed === 8);
      expect(done.delivery).toMatchObject({ delivered: 7, failed: 1 });
      const failed = await eventsOf(signal.id, '&status=failed');
      expect(failed.map((event) => event.event_id)).toEqual(['batch-5']);
      expect(failed[0]!.error).toMatch(/^invalid_request: Invalid parameter: data\[0\]: user_data\.fbc is malformed/);
      const delivered = meta.conversions.requests
        .filter((request) => request.pixelId === signal.pixelId)
        .flatMap((request) => request.data);
      expect(delivered.map((event) => event.event_id).sort()).toEqual(
        events
          .filter((_, index) => index !== 5)
          .map((event) => event.event_id)
          .sort(),
      );
    });

    it('retries Meta throttling (code 17, then 429 with Retry-After) and delivers', async () => {
      const signal = await metaSignal();
      meta.conversions.failNext({ code: 17, message: 'User request limit reached' });
      meta.conversions.failNext({ code: 4, status: 429, retryAfterSeconds: 1, message: 'Application request limit reached' });
      const callsBefore = meta.conversions.calls.length;
      await postEvents(signal.id, [{ event_id: 'throttled', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }]);
      await settled(signal.id, 'delivered', (detail) => detail.delivery.delivered === 1);
      expect(meta.conversions.calls.slice(callsBefore).map((entry) => entry.status)).toEqual([400, 429, 200]);
    });

    it('turns the signal failed when Meta does not know the pixel, and tells a webhook with the signal as the API shows it', async () => {
      const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
      const hook = await call('POST', '/api/v1/webhooks/', { url: 'http://127.0.0.1:9/signal-failed', events: ['signal.failed'] }, admin);
      expect(hook.status).toBe(201);
      const signal = await metaSignal();
      meta.conversions.pixels.delete(signal.pixelId);
      await postEvents(signal.id, [{ event_id: 'nowhere', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }]);
      const failed = await settled(signal.id, 'failed', (detail) => detail.status === 3);
      expect(failed.status_reason).toMatch(/^destination_refused: Unsupported post request/);
      const [told]: { body: string }[] = await api.dataSource.query(
        `SELECT body FROM webhook_deliveries WHERE webhook_id = $1 AND event_type = 'signal.failed'`,
        [hook.body.id],
      );
      const data = (JSON.parse(told.body) as { data: SignalBody }).data;
      expect(data).toMatchObject({ id: signal.id, status: 3, status_reason: failed.status_reason });
      expect(data.delivery).toMatchObject({ received: 1 });
      await call('DELETE', `/api/v1/webhooks/${hook.body.id}/`, undefined, admin);
    });

    it('turns the connection revoked and the signal paused when Meta says the grant is gone, and holds the events', async () => {
      const own = await createTokenConnection(api, workspace, 'meta_ads', meta.issueAccessToken());
      const pixelId = String(++pixel);
      meta.conversions.pixels.add(pixelId);
      const created = await call('POST', '/api/v1/signals/', {
        name: 'Grant lost',
        signal_type: 'value',
        connection: own.id,
        config: { pixel_id: pixelId, event_name: 'Purchase', action_source: 'system_generated' },
        status: 1,
      });
      meta.killTokens(460);
      try {
        await postEvents(created.body.id, [{ event_id: 'no-grant', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }]);
        const paused = await settled(created.body.id, 'paused', (detail) => detail.status === 2);
        expect(paused.delivery.last_error).toMatch(/^reauthorize_required: /);
        const connection = await call('GET', `/api/v1/connections/${own.id}/`);
        expect(connection.body).toMatchObject({ status: 'revoked' });
        await eventually(
          () => eventsOf(created.body.id, '&status=held'),
          (events) => events.length === 1,
          'held',
        );
      } finally {
        meta.killTokens(undefined);
      }
    });

    it('holds the events of a paused signal and sends them when it is active again', async () => {
      const signal = await metaSignal();
      expect((await call('PATCH', `/api/v1/signals/${signal.id}/`, { status: 2 })).status).toBe(200);
      await postEvents(signal.id, [{ event_id: 'paused-1', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }]);
      expect((await eventsOf(signal.id)).map((event) => event.status)).toEqual(['held']);
      expect((await signalOf(signal.id)).delivery).toMatchObject({ received: 1, pending: 1 });
      expect((await call('PATCH', `/api/v1/signals/${signal.id}/`, { status: 1 })).status).toBe(200);
      await settled(signal.id, 'delivered', (detail) => detail.delivery.delivered === 1);
    });
  });

  describe('MCP', () => {
    it('get_signal shows the delivery counts, as the REST detail does', async () => {
      const signal = await metaSignal();
      await postEvents(signal.id, [{ event_id: 'mcp-1', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }]);
      const detail = await settled(signal.id, 'delivered', (body) => body.delivery.delivered === 1);
      const minted = await call('POST', '/api/v1/mcp-tokens/', { name: 'delivery agent' });
      const client = new Client({ name: 'signal-events', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${minted.body.token as string}` } },
        }),
      );
      try {
        const result = await client.callTool({ name: 'get_signal', arguments: { id: signal.id } });
        expect(result.isError).toBeFalsy();
        expect((result.structuredContent as SignalBody).delivery).toEqual(detail.delivery);
        expect((result.structuredContent as SignalBody).status_reason).toBeNull();
      } finally {
        await client.close();
      }
    });
  });

  describe('upkeep', () => {
    it('expires events held longer than 7 days, holds what a paused signal left pending, and deletes events past the 30-day dedup window', async () => {
      const signal = await metaSignal();
      expect((await call('PATCH', `/api/v1/signals/${signal.id}/`, { status: 2 })).status).toBe(200);
      const event = (id: string) => ({ event_id: id, event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' });
      await postEvents(signal.id, [event('old-held'), event('fresh-held'), event('left-pending'), event('ancient')]);
      const age = (eventId: string, days: number, status?: string) =>
        api.dataSource.query(
          `UPDATE signal_events SET received_at = now() - make_interval(days => $2)${status ? `, status = '${status}'` : ''} WHERE signal_id = $1 AND event_id = $3`,
          [signal.id, days, eventId],
        );
      await age('old-held', 8);
      await age('left-pending', 1, 'pending');
      await age('ancient', 31);
      await api.app.get(SignalDeliveryService).maintenanceJob();
      const statuses = Object.fromEntries((await eventsOf(signal.id)).map((row) => [row.event_id, row.status]));
      expect(statuses).toEqual({ 'old-held': 'expired', 'fresh-held': 'held', 'left-pending': 'held' });
      const [expired] = await eventsOf(signal.id, '&status=expired');
      expect(expired!.error).toMatch(/^held_too_long: /);
      expect((await signalOf(signal.id)).delivery).toMatchObject({ received: 3, pending: 2, failed: 1, delivered: 0 });
      // The dedup window is the rows kept: an event_id deleted with its row is new again.
      expect((await postEvents(signal.id, [event('ancient'), event('fresh-held')])).body).toMatchObject({ accepted: 1, duplicates: 1 });
    });

    it('takes an event_id received more than 30 days ago as a new event before the upkeep has deleted it, and delivers it', async () => {
      const signal = await googleSignal();
      const event = (id: string) => ({ event_id: id, event_time: minutesAgo(1), identifiers: { email: 'window@example.com' } });
      expect((await postEvents(signal.id, [event('monthly'), event('recent')])).body).toEqual({ accepted: 2, duplicates: 0, rejected: [] });
      await settled(signal.id, 'delivered', (body) => body.delivery.delivered === 2);
      const before = (await eventsOf(signal.id)).find((row) => row.event_id === 'monthly')!;
      await api.dataSource.query(
        `UPDATE signal_events SET received_at = now() - interval '31 days' WHERE signal_id = $1 AND event_id = 'monthly'`,
        [signal.id],
      );
      expect((await postEvents(signal.id, [event('monthly'), event('recent')])).body).toEqual({ accepted: 1, duplicates: 1, rejected: [] });
      const done = await settled(signal.id, 'delivered', (body) => body.delivery.delivered === 2 && body.delivery.pending === 0);
      expect(done.delivery).toMatchObject({ received: 2, delivered: 2, pending: 0, failed: 0 });
      const monthly = (await eventsOf(signal.id)).find((row) => row.event_id === 'monthly')!;
      // A new event: its own id and received_at, delivered again.
      expect(monthly.id).not.toBe(before.id);
      expect(Date.now() - Date.parse(monthly.received_at)).toBeLessThan(60_000);
      const sent = google.events.requests.filter((request) => request.conversionActionId === signal.conversionActionId);
      expect(sent.flatMap((request) => request.events.map((one) => one.transactionId)).sort()).toEqual(['monthly', 'monthly', 'recent']);
    });

    it('answers a retry with the same Idempotency-Key with the first answer, storing nothing twice', async () => {
      const signal = await metaSignal();
      const body = { events: [{ event_id: 'idem-1', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }] };
      const headers = { ...auth, 'idempotency-key': `events-${signal.id}` };
      const first = await api.request(`/api/v1/signals/${signal.id}/events/`, send('POST', body, headers));
      const second = await api.request(`/api/v1/signals/${signal.id}/events/`, send('POST', body, headers));
      expect([first.status, second.status]).toEqual([202, 202]);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(await second.json()).toEqual(await first.json());
      expect((await signalOf(signal.id)).delivery.received).toBe(1);
    });
  });

  describe('roles', () => {
    it('lets viewers and read keys list events but not send them; write keys send', async () => {
      const signal = await metaSignal();
      const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
      const event = [{ event_id: 'role', event_time: minutesAgo(1), fbp: 'fb.1.1700000000000.1' }];
      expect((await postEvents(signal.id, event, viewer)).status).toBe(403);
      expect((await call('GET', `/api/v1/signals/${signal.id}/events/`, undefined, viewer)).status).toBe(200);
      const readKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
      expect((await postEvents(signal.id, event, readKey)).status).toBe(403);
      const writeKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'write' })).key);
      expect((await postEvents(signal.id, event, writeKey)).status).toBe(202);
    });
  });
});
