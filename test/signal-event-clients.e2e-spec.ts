import { createHash } from 'node:crypto';
import type { DestinationOutcome } from '../src/destinations/destination-types.js';
import { type GoogleEvent, GoogleEventsClient } from '../src/destinations/google-events.client.js';
import { MetaConversionsClient, type MetaServerEvent } from '../src/destinations/meta-conversions.client.js';
import { type FakeGoogleAds, type FakeMetaAds, startFakeGoogleAds, startFakeMetaAds } from './support/fake-ad-platforms.js';

/**
 * The two signal-event clients of SPEC 10.4 against the local servers that speak Google's
 * events:ingest and Meta's Conversions API over HTTP: what each answer is classified as, which the
 * delivery job acts on (retry, split, fail the signal, suspend the connection).
 */

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function failure<T>(outcome: DestinationOutcome<T>) {
  if (outcome.ok) throw new Error('Expected a failure');
  return outcome.failure;
}

describe('Google events client against the fake events:ingest', () => {
  let google: FakeGoogleAds;
  let client: GoogleEventsClient;
  let token: string;
  const target = { operatingAccountId: '1234567890', conversionActionId: '555' };
  const event = (id: string, email = sha('a@example.com')): GoogleEvent => ({
    transactionId: id,
    eventTimestamp: new Date(Date.now() - 60_000).toISOString(),
    userData: { userIdentifiers: [{ emailAddress: email }] },
  });

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    google.accounts = [{ id: '1234567890', name: 'Shop' }];
    google.events.conversionActions.set('555', '1234567890');
    client = new GoogleEventsClient({ baseUrl: google.url, timeoutMs: 5000 });
    token = google.issueAccessToken();
  });
  afterAll(() => google.close());

  it('sends the events to the conversion action and answers the request id; validateOnly is passed on', async () => {
    const outcome = await client.ingestEvents(token, target, [event('a'), event('b')], { validateOnly: true });
    expect(outcome).toEqual({ ok: true, value: { requestId: expect.any(String) } });
    expect(google.events.requests.at(-1)).toMatchObject({ conversionActionId: '555', validateOnly: true, encoding: 'HEX' });
  });

  it('classifies the destination refused, the scope missing, the grant gone and the quota', async () => {
    expect(failure(await client.ingestEvents(token, { ...target, conversionActionId: '556' }, [event('a')]))).toMatchObject({
      kind: 'refused',
      reason: 'not_found',
    });
    expect(failure(await client.ingestEvents(token, { ...target, operatingAccountId: '999' }, [event('a')]))).toMatchObject({
      kind: 'refused',
      reason: 'permission_denied',
    });
    const adwordsOnly = google.issueAccessToken(['https://www.googleapis.com/auth/adwords']);
    expect(failure(await client.ingestEvents(adwordsOnly, target, [event('a')])).kind).toBe('scope_missing');
    const revoked = google.issueAccessToken();
    google.revokeAccessToken(revoked);
    expect(failure(await client.ingestEvents(revoked, target, [event('a')])).kind).toBe('grant_lost');
    google.events.failNext({ kind: 'rate_limited', retryAfterSeconds: 7 });
    expect(failure(await client.ingestEvents(token, target, [event('a')]))).toMatchObject({
      kind: 'retryable',
      reason: 'rate_limited',
      retryAfterSeconds: 7,
    });
  });

  it('is refused whole for one bad event, naming it, and refuses more than 2,000 events without a call', async () => {
    const calls = google.events.calls.length;
    const refused = failure(await client.ingestEvents(token, target, [event('a'), event('b', 'raw@example.com')]));
    expect(refused).toMatchObject({ kind: 'refused', reason: 'invalid_request' });
    expect(google.events.calls.length).toBe(calls + 1);
    const many = Array.from({ length: 2001 }, (_, index) => event(`e${index}`));
    expect(failure(await client.ingestEvents(token, target, many))).toMatchObject({ kind: 'refused', status: 0 });
    expect(google.events.calls.length).toBe(calls + 1);
  });
});

describe('Meta Conversions API client against the fake Graph', () => {
  let meta: FakeMetaAds;
  let client: MetaConversionsClient;
  let token: string;
  const event = (id: string, fbc?: string): MetaServerEvent => ({
    event_name: 'Purchase',
    event_time: Math.floor(Date.now() / 1000) - 60,
    event_id: id,
    action_source: 'system_generated',
    user_data: { em: [sha('a@example.com')], ...(fbc && { fbc }) },
  });

  beforeAll(async () => {
    meta = await startFakeMetaAds();
    meta.conversions.pixels.add('4242');
    client = new MetaConversionsClient({ graphUrl: `${meta.url}/v25.0`, timeoutMs: 5000, appSecret: meta.appSecret });
    token = meta.issueAccessToken();
  });
  afterAll(() => meta.close());

  it('sends the events with appsecret_proof and the test event code, and reads events_received', async () => {
    expect(await client.sendEvents(token, { pixelId: '4242', testEventCode: 'TEST1' }, [event('a'), event('b')])).toEqual({
      ok: true,
      value: { eventsReceived: 2 },
    });
    expect(meta.conversions.requests.at(-1)).toMatchObject({ pixelId: '4242', testEventCode: 'TEST1' });
  });

  it('classifies an unknown pixel, throttling with its wait, one bad event, and a revoked grant', async () => {
    expect(failure(await client.sendEvents(token, { pixelId: '4343' }, [event('a')]))).toMatchObject({
      kind: 'refused',
      reason: 'not_found',
      platformCode: '100/33',
    });
    meta.conversions.failNext({ code: 80004, regainAccessMinutes: 2 });
    expect(failure(await client.sendEvents(token, { pixelId: '4242' }, [event('a')]))).toMatchObject({
      kind: 'retryable',
      reason: 'rate_limited',
      retryAfterSeconds: 120,
    });
    expect(failure(await client.sendEvents(token, { pixelId: '4242' }, [event('a'), event('b', 'nonsense')]))).toMatchObject({
      kind: 'refused',
      reason: 'invalid_request',
    });
    meta.killTokens(460);
    try {
      expect(failure(await client.sendEvents(token, { pixelId: '4242' }, [event('a')]))).toMatchObject({
        kind: 'grant_lost',
        grant: 'revoked',
      });
    } finally {
      meta.killTokens(undefined);
    }
  });
});
