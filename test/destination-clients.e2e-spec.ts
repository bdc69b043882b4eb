import { createHash } from 'node:crypto';
import type { DestinationOutcome } from '../src/destinations/destination-types.js';
import { type GoogleMemberInput, prepareGoogleMembers } from '../src/destinations/google-audience-members.js';
import { GoogleDataManagerClient } from '../src/destinations/google-data-manager.client.js';
import { type MetaMemberInput, planMetaUpload } from '../src/destinations/meta-audience-rows.js';
import { MetaCustomAudiencesClient } from '../src/destinations/meta-custom-audiences.client.js';
import { normalizeIdentifiers } from '../src/people/normalization/identifier-normalization.js';
import { type FakeGoogleAds, type FakeMetaAds, startFakeGoogleAds, startFakeMetaAds } from './support/fake-ad-platforms.js';

/**
 * The two destination clients of SPEC 10.3 against local servers that speak the Data Manager API
 * and Meta's custom-audience Graph over real HTTP (test/support/fake-ad-platforms.ts). Expected
 * hashes are computed here, by hand, from the platforms' published normal forms.
 */

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const ADWORDS = 'https://www.googleapis.com/auth/adwords';

function value<T>(outcome: DestinationOutcome<T>): T {
  if (!outcome.ok) throw new Error(`Expected success, got ${JSON.stringify(outcome.failure)}`);
  return outcome.value;
}

function failure<T>(outcome: DestinationOutcome<T>) {
  if (outcome.ok) throw new Error('Expected a failure');
  return outcome.failure;
}

/** One person's identifiers through the project's own normalisation (src/people), as the sync will read them. */
const ada = normalizeIdentifiers({
  email: ['Ada.Lovelace+news@GMAIL.com', 'ada@example.org'],
  phone: '+44 7700 900123',
  first_name: 'Ada',
  last_name: "O'Lovelace",
  country_code: 'gb',
  postal_code: 'SW1A 1AA',
  mobile_ad_id: 'AB0C5F6E-1B8D-4C7A-9E2F-3D4B5A6C7D8E',
});

describe('Google Data Manager client against the fake Data Manager API', () => {
  let google: FakeGoogleAds;
  let client: GoogleDataManagerClient;
  let token: string;
  const account = { operatingAccountId: '1234567890' };

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    google.accounts = [{ id: '1234567890', name: 'Shop' }];
    client = new GoogleDataManagerClient({ baseUrl: google.url, timeoutMs: 5000 });
    token = google.issueAccessToken();
  });
  afterAll(() => google.close());

  const googleMember = (key: number, email: string): GoogleMemberInput<number> => ({
    key,
    emails: [sha(email)],
    phones: [],
    consent: { adUserData: 'granted', adPersonalization: 'granted' },
  });

  it('creates a Customer Match list for contact information and reads its match rate back', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Newsletter', membershipDurationDays: 30 }));
    expect(list).toMatchObject({ displayName: 'Newsletter', membershipStatus: 'OPEN', matchRatePercentage: 0 });
    expect(list.resourceName).toBe(`accountTypes/GOOGLE_ADS/accounts/1234567890/userLists/${list.id}`);
    const stored = google.dataManager.userLists.get(list.id)!;
    expect(stored.uploadKeyTypes).toEqual(['CONTACT_ID']);
    expect(stored.dataSourceType).toBe('DATA_SOURCE_TYPE_FIRST_PARTY');

    const { batches } = prepareGoogleMembers([googleMember(1, 'grace@example.com')], 'ingest');
    value(await client.ingestMembers(token, { ...account, userListId: list.id, customerMatchTermsAccepted: true }, batches[0]!));
    expect(value(await client.getUserList(token, account, list.id)).matchRatePercentage).toBe(62);
  });

  it('ingests and removes the exact Google hashes (Gmail rule, E.164 with +, clear address), consent per member, encoding HEX', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Exact hashes' }));
    const input: GoogleMemberInput<string> = {
      key: 'ada',
      emails: ada.google.emails,
      phones: ada.google.phones,
      address: {
        givenName: ada.google.firstName!,
        familyName: ada.google.lastName!,
        regionCode: ada.google.countryCode!,
        postalCode: ada.google.postalCode!,
      },
      consent: { adUserData: 'granted', adPersonalization: 'unspecified' },
    };
    const ingest = prepareGoogleMembers([input], 'ingest');
    const { requestId } = value(
      await client.ingestMembers(token, { ...account, userListId: list.id, customerMatchTermsAccepted: true }, ingest.batches[0]!),
    );
    const received = google.dataManager.requests.find((request) => request.requestId === requestId)!;
    expect(received).toMatchObject({ operation: 'ingest', userListId: list.id, encoding: 'HEX' });
    expect(received.termsOfService).toEqual({ customerMatchTermsOfServiceStatus: 'ACCEPTED' });
    expect(received.members).toEqual([
      {
        userData: {
          userIdentifiers: [
            { emailAddress: sha('adalovelace@gmail.com') },
            { phoneNumber: sha('+447700900123') },
            { address: { givenName: sha('ada'), familyName: sha("o'lovelace"), regionCode: 'GB', postalCode: 'SW1A 1AA' } },
            { emailAddress: sha('ada@example.org') },
          ],
        },
        consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_STATUS_UNSPECIFIED' },
      },
    ]);
    expect(google.dataManager.userLists.get(list.id)!.members.size).toBe(1);

    const removal = prepareGoogleMembers([input], 'remove');
    const removed = value(await client.removeMembers(token, { ...account, userListId: list.id }, removal.batches[0]!));
    const removeRequest = google.dataManager.requests.find((request) => request.requestId === removed.requestId)!;
    expect(removeRequest.operation).toBe('remove');
    expect(removeRequest.members[0]!.consent).toBeUndefined();
    expect(google.dataManager.userLists.get(list.id)!.members.size).toBe(0);
  });

  it('sends 25,000 members as three requests of at most 10,000, each with its own request id', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Big' }));
    const inputs = Array.from({ length: 25_000 }, (_, key) => googleMember(key, `person${key}@example.com`));
    const { batches } = prepareGoogleMembers(inputs, 'ingest');
    const before = google.dataManager.requests.length;
    const requestIds: string[] = [];
    for (const batch of batches)
      requestIds.push(
        value(await client.ingestMembers(token, { ...account, userListId: list.id, customerMatchTermsAccepted: true }, batch)).requestId,
      );
    const sent = google.dataManager.requests.slice(before);
    expect(sent.map((request) => request.members.length)).toEqual([10_000, 10_000, 5_000]);
    expect(new Set(requestIds).size).toBe(3);
    expect(sent[2]!.members[4_999]!.userData.userIdentifiers[0]).toEqual({ emailAddress: sha('person24999@example.com') });
    expect(google.dataManager.userLists.get(list.id)!.members.size).toBe(25_000);
  });

  it('gives a verdict with error counts from requestStatus:retrieve', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Verdicts' }));
    const { batches } = prepareGoogleMembers([googleMember(1, 'a@example.com'), googleMember(2, 'b@example.com')], 'ingest');
    const { requestId } = value(
      await client.ingestMembers(token, { ...account, userListId: list.id, customerMatchTermsAccepted: true }, batches[0]!),
    );
    expect(value(await client.retrieveRequestStatus(token, requestId))).toMatchObject({
      state: 'success',
      recordCount: 2,
      errorCounts: {},
    });
    google.dataManager.setVerdict(requestId, { requestStatus: 'PROCESSING' });
    expect(value(await client.retrieveRequestStatus(token, requestId))).toMatchObject({ state: 'processing', recordCount: null });
    google.dataManager.setVerdict(requestId, {
      requestStatus: 'PARTIAL_SUCCESS',
      errorCounts: [{ reason: 'INVALID_SHA256_FORMAT', recordCount: 1 }],
    });
    expect(value(await client.retrieveRequestStatus(token, requestId))).toEqual({
      state: 'partial_success',
      recordCount: 2,
      errorCounts: { INVALID_SHA256_FORMAT: 1 },
      warningCounts: {},
      uploadMatchRateRange: 'MATCH_RATE_RANGE_51_TO_60',
    });
    expect(failure(await client.retrieveRequestStatus(token, 'unknown-request'))).toMatchObject({
      kind: 'refused',
      reason: 'unknown_request',
    });
  });

  it('sends nothing the API would refuse: a raw email, 11 identifiers, 10,001 members, undeclared terms', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Refusals' }));
    const target = { ...account, userListId: list.id, customerMatchTermsAccepted: true };
    const calls = google.dataManager.calls.length;
    const prepared = prepareGoogleMembers([{ ...googleMember(1, 'x@example.com'), emails: ['ada@example.com'] }], 'ingest');
    expect(prepared.rejected).toEqual([{ key: 1, reason: 'invalid_hash' }]);
    const raw = { keys: [1], members: [{ userData: { userIdentifiers: [{ emailAddress: 'ada@example.com' }] } }] };
    expect(failure(await client.ingestMembers(token, target, raw))).toMatchObject({
      kind: 'refused',
      reason: 'invalid_request',
      status: 0,
    });
    const eleven = {
      keys: [1],
      members: [{ userData: { userIdentifiers: Array.from({ length: 11 }, (_, n) => ({ emailAddress: sha(`${n}`) })) } }],
    };
    expect(failure(await client.ingestMembers(token, target, eleven))).toMatchObject({ kind: 'refused', reason: 'invalid_request' });
    const tooMany = {
      keys: Array.from({ length: 10_001 }, (_, n) => n),
      members: Array.from({ length: 10_001 }, () => eleven.members[0]!),
    };
    expect(failure(await client.ingestMembers(token, target, tooMany))).toMatchObject({ kind: 'refused', reason: 'invalid_request' });
    const ok = prepareGoogleMembers([googleMember(1, 'x@example.com')], 'ingest').batches[0]!;
    expect(failure(await client.ingestMembers(token, { ...target, customerMatchTermsAccepted: false }, ok))).toMatchObject({
      kind: 'refused',
      reason: 'terms_not_accepted',
    });
    expect(google.dataManager.calls.length).toBe(calls);
  });

  it('and the fake refuses the same things when they are sent, as Google does', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Fake checks' }));
    const send = (body: unknown) =>
      fetch(`${google.url}/v1/audienceMembers:ingest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { error: { details: { reason?: string }[] } },
      }));
    const destinations = [{ operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: list.id }];
    const terms = { customerMatchTermsOfServiceStatus: 'ACCEPTED' };
    const member = (identifier: object) => ({ userData: { userIdentifiers: [identifier] } });
    const reasonOf = (answer: { body: { error: { details: { reason?: string }[] } } }) => answer.body.error.details[0]!.reason;
    expect(
      reasonOf(
        await send({
          destinations,
          encoding: 'HEX',
          termsOfService: terms,
          audienceMembers: [member({ emailAddress: 'ada@example.com' })],
        }),
      ),
    ).toBe('INVALID_HEX_ENCODING');
    expect(reasonOf(await send({ destinations, encoding: 'HEX', audienceMembers: [member({ emailAddress: sha('a') })] }))).toBe(
      'TERMS_AND_CONDITIONS_NOT_SIGNED',
    );
    const eleven = { userData: { userIdentifiers: Array.from({ length: 11 }, (_, n) => ({ emailAddress: sha(`${n}`) })) } };
    expect(reasonOf(await send({ destinations, encoding: 'HEX', termsOfService: terms, audienceMembers: [eleven] }))).toBe(
      'TOO_MANY_USER_IDENTIFIERS',
    );
    const many = Array.from({ length: 10_001 }, () => member({ emailAddress: sha('a') }));
    expect(reasonOf(await send({ destinations, encoding: 'HEX', termsOfService: terms, audienceMembers: many }))).toBe(
      'TOO_MANY_AUDIENCE_MEMBERS',
    );
  });

  it('classifies 429 RESOURCE_EXHAUSTED with Retry-After, 5xx, a dead token and a token without the datamanager scope', async () => {
    const list = value(await client.createUserList(token, account, { displayName: 'Faults' }));
    const target = { ...account, userListId: list.id, customerMatchTermsAccepted: true };
    const batch = prepareGoogleMembers([googleMember(1, 'f@example.com')], 'ingest').batches[0]!;

    google.dataManager.failNext({ kind: 'rate_limited', retryAfterSeconds: 42 }, { route: 'ingest' });
    expect(failure(await client.ingestMembers(token, target, batch))).toMatchObject({
      kind: 'retryable',
      reason: 'rate_limited',
      retryAfterSeconds: 42,
    });
    google.dataManager.failNext({ kind: 'rate_limited' }, { route: 'ingest' });
    expect(failure(await client.ingestMembers(token, target, batch))).toMatchObject({
      kind: 'retryable',
      reason: 'rate_limited',
      retryAfterSeconds: null,
    });
    google.dataManager.failNext({ kind: 'server_error', status: 503, retryAfterSeconds: 7 }, { route: 'ingest' });
    expect(failure(await client.ingestMembers(token, target, batch))).toMatchObject({
      kind: 'retryable',
      reason: 'server_error',
      retryAfterSeconds: 7,
    });
    google.dataManager.failNext({ kind: 'concurrent_modification' }, { route: 'ingest' });
    expect(failure(await client.ingestMembers(token, target, batch))).toMatchObject({
      kind: 'refused',
      platformCode: 'CONCURRENT_MODIFICATION',
    });

    const adwordsOnly = google.issueAccessToken([ADWORDS]);
    expect(failure(await client.ingestMembers(adwordsOnly, target, batch))).toMatchObject({ kind: 'scope_missing' });
    expect(failure(await client.getUserList(adwordsOnly, account, list.id))).toMatchObject({ kind: 'scope_missing' });

    const doomed = google.issueAccessToken();
    google.revokeAccessToken(doomed);
    expect(failure(await client.ingestMembers(doomed, target, batch))).toMatchObject({ kind: 'grant_lost' });

    expect(failure(await client.getUserList(token, account, '999'))).toMatchObject({ kind: 'refused', reason: 'not_found', status: 404 });
    expect(failure(await client.getUserList(token, { operatingAccountId: '555' }, list.id))).toMatchObject({
      kind: 'refused',
      reason: 'permission_denied',
    });
    // Afterwards the same request goes through.
    expect(value(await client.ingestMembers(token, target, batch)).requestId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('classifies a platform that is not there as retryable, and never puts the token in a failure', async () => {
    const absent = new GoogleDataManagerClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const outcome = failure(await absent.getUserList(token, account, '1'));
    expect(outcome).toMatchObject({ kind: 'retryable', reason: 'unreachable', retryAfterSeconds: null });
    expect(JSON.stringify(outcome)).not.toContain(token);
  });
});

describe('Meta custom audiences client against the fake Graph', () => {
  let meta: FakeMetaAds;
  let client: MetaCustomAudiencesClient;
  let token: string;
  let sessionIds: number;

  beforeAll(async () => {
    meta = await startFakeMetaAds();
    meta.accounts = [{ account_id: '1122334455', name: 'Shop' }];
    sessionIds = 9_000_000;
    client = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 5000,
      maxRequestBytes: 60_000,
      appSecret: meta.appSecret,
      newSessionId: () => ++sessionIds,
    });
    token = meta.issueAccessToken();
  });
  afterAll(() => meta.close());

  const metaMember = (key: number, email: string): MetaMemberInput<number> => ({ key, emails: [sha(email)], phones: [] });

  async function upload<Key>(
    target: MetaCustomAudiencesClient,
    audienceId: string,
    operation: 'add' | 'remove',
    members: MetaMemberInput<Key>[],
  ) {
    const plan = planMetaUpload(members, target.maxRequestBytes);
    const session = target.openSession(audienceId, operation, plan);
    const receipts = [];
    while (!session.done) receipts.push(value(await session.sendNext(token)));
    return { plan, session, receipts };
  }

  it('creates a customer-file audience (subtype CUSTOM, USER_PROVIDED_ONLY) and reads its size bounds and status', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Newsletter', description: 'People on the list' }));
    expect(meta.customAudiences.audiences.get(id)).toMatchObject({
      subtype: 'CUSTOM',
      customerFileSource: 'USER_PROVIDED_ONLY',
      name: 'Newsletter',
    });
    await upload(
      client,
      id,
      'add',
      Array.from({ length: 100 }, (_, key) => metaMember(key, `p${key}@example.com`)),
    );
    expect(value(await client.getAudience(token, id))).toEqual({
      id,
      name: 'Newsletter',
      approximateCountLowerBound: 49,
      approximateCountUpperBound: 61,
      operationStatus: { code: 200, description: 'Normal' },
      flagged: false,
    });
  });

  it('adds and removes the exact Meta hashes (no Gmail rule, phone digits without +, names without punctuation) under one schema', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Exact' }));
    const input: MetaMemberInput<string> = {
      key: 'ada',
      emails: ada.meta.emails,
      phones: ada.meta.phones,
      firstName: ada.meta.firstName,
      lastName: ada.meta.lastName,
      country: ada.meta.country,
      zip: ada.meta.zip,
      mobileAdId: ada.meta.madid,
      externId: 'crm-42',
    };
    const { receipts } = await upload(client, id, 'add', [input]);
    const request = meta.customAudiences.requests.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.schema).toEqual(['EMAIL', 'PHONE', 'FN', 'LN', 'COUNTRY', 'ZIP', 'MADID', 'EXTERN_ID']);
    const rest = [sha('ada'), sha('olovelace'), sha('gb'), sha('sw1a1aa'), 'ab0c5f6e-1b8d-4c7a-9e2f-3d4b5a6c7d8e', 'crm-42'];
    expect(request.data).toEqual([
      [sha('ada.lovelace+news@gmail.com'), sha('447700900123'), ...rest],
      [sha('ada@example.org'), '', ...rest],
    ]);
    expect(request.session).toMatchObject({ batch_seq: 1, last_batch_flag: true, estimated_num_total: 2 });
    expect(receipts).toEqual([{ batchSeq: 1, lastBatch: true, keys: ['ada'], rowsSent: 2, numReceived: 2, numInvalidEntries: 0 }]);
    expect(meta.customAudiences.audiences.get(id)!.rows.size).toBe(2);

    await upload(client, id, 'remove', [input]);
    expect(meta.customAudiences.requests.at(-1)!.method).toBe('DELETE');
    expect(meta.customAudiences.audiences.get(id)!.rows.size).toBe(0);
  });

  it('uploads 25,000 members in 10,000-row requests under one session whose last batch closes it', async () => {
    const roomy = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 10_000,
      maxRequestBytes: 10_000_000,
      appSecret: meta.appSecret,
      newSessionId: () => ++sessionIds,
    });
    const { id } = value(await roomy.createAudience(token, '1122334455', { name: 'Big' }));
    const before = meta.customAudiences.requests.length;
    const { session, receipts } = await upload(
      roomy,
      id,
      'add',
      Array.from({ length: 25_000 }, (_, key) => metaMember(key, `person${key}@example.com`)),
    );
    const sent = meta.customAudiences.requests.slice(before);
    expect(sent.map((request) => request.data.length)).toEqual([10_000, 10_000, 5_000]);
    expect(sent.map((request) => request.session)).toEqual([
      { session_id: session.sessionId, batch_seq: 1, last_batch_flag: false, estimated_num_total: 25_000 },
      { session_id: session.sessionId, batch_seq: 2, last_batch_flag: false, estimated_num_total: 25_000 },
      { session_id: session.sessionId, batch_seq: 3, last_batch_flag: true, estimated_num_total: 25_000 },
    ]);
    expect(receipts.map((receipt) => receipt.numReceived)).toEqual([10_000, 20_000, 25_000]);
    expect(sent[2]!.data[4_999]).toEqual([sha('person24999@example.com')]);
    expect(meta.customAudiences.sessions.get(session.sessionId)).toMatchObject({ closed: true, lastSeq: 3 });

    // Meta takes no batch after last_batch_flag.
    const late = await roomy.sendBatch(token, {
      audienceId: id,
      operation: 'add',
      schema: ['EMAIL'],
      batch: { keys: [1], rows: [[sha('late@example.com')]] },
      session: { session_id: session.sessionId, batch_seq: 4, last_batch_flag: true, estimated_num_total: 1 },
    });
    expect(failure(late)).toMatchObject({ kind: 'refused', reason: 'invalid_request', platformCode: '100' });
  });

  it('keeps every request within META_MAX_REQUEST_BYTES, and the fake refuses a larger body as Meta does in practice', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Bytes' }));
    meta.customAudiences.maxBodyBytes = 65_000;
    const before = meta.customAudiences.requests.length;
    await upload(
      client,
      id,
      'add',
      Array.from({ length: 3_000 }, (_, key) => ({ ...metaMember(key, `p${key}@example.com`), phones: [sha(`4477009${key}`)] })),
    );
    const sent = meta.customAudiences.requests.slice(before);
    expect(sent.length).toBeGreaterThan(3);
    expect(Math.max(...sent.map((request) => request.bytes))).toBeLessThanOrEqual(60_000);
    expect(sent.reduce((sum, request) => sum + request.data.length, 0)).toBe(3_000);

    const careless = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 5000,
      maxRequestBytes: 1_000_000,
      appSecret: meta.appSecret,
    });
    const plan = planMetaUpload(
      Array.from({ length: 2_000 }, (_, key) => metaMember(key, `q${key}@example.com`)),
      1_000_000,
    );
    expect(failure(await careless.openSession(id, 'add', plan).sendNext(token))).toMatchObject({
      kind: 'refused',
      reason: 'too_large',
      status: 413,
    });
    meta.customAudiences.maxBodyBytes = 10_000_000;
  });

  it('rejects oversize and malformed rows before sending, and Meta counts a raw email sent anyway as an invalid entry', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Rows' }));
    const small = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 5000,
      maxRequestBytes: 700,
      appSecret: meta.appSecret,
    });
    const plan = planMetaUpload(
      [
        { key: 1, emails: [sha('ok@example.com')], phones: [] },
        {
          key: 2,
          emails: [sha('big@example.com')],
          phones: [sha('1')],
          firstName: sha('f'),
          lastName: sha('l'),
          externId: 'x'.repeat(255),
          zip: sha('z'),
        },
        { key: 3, emails: ['raw@example.com'], phones: [] },
      ],
      small.maxRequestBytes,
    );
    expect(plan.rejected).toEqual([
      { key: 3, reason: 'invalid_hash' },
      { key: 2, reason: 'too_large' },
    ]);
    const before = meta.customAudiences.requests.length;
    const receipt = value(await small.openSession(id, 'add', plan).sendNext(token));
    expect(receipt.keys).toEqual([1]);
    expect(meta.customAudiences.requests.length).toBe(before + 1);

    const raw = await client.sendBatch(token, {
      audienceId: id,
      operation: 'add',
      schema: ['EMAIL'],
      batch: { keys: [9], rows: [['raw@example.com'], [sha('fine@example.com')]] },
      session: { session_id: ++sessionIds, batch_seq: 1, last_batch_flag: true, estimated_num_total: 2 },
    });
    expect(value(raw)).toMatchObject({ numInvalidEntries: 1, numReceived: 2 });
  });

  it('resends a failed batch with the same batch_seq, so a throttled session goes on where it stopped', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Retry' }));
    const roomy = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 5000,
      maxRequestBytes: 10_000_000,
      appSecret: meta.appSecret,
    });
    const plan = planMetaUpload(
      Array.from({ length: 15_000 }, (_, key) => metaMember(key, `r${key}@example.com`)),
      roomy.maxRequestBytes,
    );
    const session = roomy.openSession(id, 'add', plan);
    value(await session.sendNext(token));
    meta.customAudiences.failNext({ code: 80003, regainAccessMinutes: 3 }, { route: 'users' });
    expect(failure(await session.sendNext(token))).toMatchObject({ kind: 'retryable', reason: 'rate_limited', retryAfterSeconds: 180 });
    expect(session.nextBatchSeq).toBe(2);
    const last = value(await session.sendNext(token));
    expect(last).toMatchObject({ batchSeq: 2, lastBatch: true, numReceived: 15_000 });
    expect(session.done).toBe(true);
  });

  it.each([4, 17, 613, 80003, 80004])('classifies Graph error %i as throttling, whatever the HTTP status', async (code) => {
    meta.customAudiences.failNext({ code, status: code === 4 ? 403 : 400 }, { route: 'get' });
    const { id } = value(await client.createAudience(token, '1122334455', { name: `Throttle ${code}` }));
    expect(failure(await client.getAudience(token, id))).toMatchObject({
      kind: 'retryable',
      reason: 'rate_limited',
      platformCode: String(code),
    });
  });

  it('classifies a dead token, a removal Meta finds too small, a flagged audience and unaccepted terms', async () => {
    const { id } = value(await client.createAudience(token, '1122334455', { name: 'Faults' }));
    await upload(client, id, 'add', [metaMember(1, 'one@example.com'), metaMember(2, 'two@example.com')]);

    meta.customAudiences.minimumSizeAfterRemoval = 2;
    const plan = planMetaUpload([metaMember(1, 'one@example.com')], client.maxRequestBytes);
    expect(failure(await client.openSession(id, 'remove', plan).sendNext(token))).toMatchObject({
      kind: 'refused',
      reason: 'audience_too_small',
      platformCode: '200/1870047',
    });
    meta.customAudiences.minimumSizeAfterRemoval = 0;

    meta.customAudiences.flag(id);
    expect(value(await client.getAudience(token, id))).toMatchObject({ flagged: true, operationStatus: { code: 471 } });
    expect(failure(await client.openSession(id, 'add', plan).sendNext(token))).toMatchObject({
      kind: 'refused',
      reason: 'audience_flagged',
      platformCode: '100/1713230',
    });

    meta.customAudiences.termsAccepted = false;
    expect(failure(await client.createAudience(token, '1122334455', { name: 'No terms' }))).toMatchObject({
      kind: 'refused',
      reason: 'terms_not_accepted',
    });
    meta.customAudiences.termsAccepted = true;

    meta.killTokens(460);
    expect(failure(await client.getAudience(token, id))).toMatchObject({ kind: 'grant_lost', grant: 'revoked' });
    meta.killTokens(463);
    expect(failure(await client.getAudience(token, id))).toMatchObject({ kind: 'grant_lost', grant: 'expired' });
    meta.killTokens(undefined);

    meta.customAudiences.failNext({ code: 1, status: 500 }, { route: 'get' });
    expect(failure(await client.getAudience(token, id))).toMatchObject({
      kind: 'retryable',
      reason: 'server_error',
      retryAfterSeconds: null,
    });
    expect(failure(await client.createAudience(token, '999', { name: 'Elsewhere' }))).toMatchObject({
      kind: 'refused',
      reason: 'not_found',
    });
  });

  it('signs every call with appsecret_proof, and a client without the right secret is refused', async () => {
    const unsigned = new MetaCustomAudiencesClient({
      graphUrl: `${meta.url}/v25.0`,
      timeoutMs: 5000,
      maxRequestBytes: 60_000,
      appSecret: 'wrong',
    });
    expect(failure(await unsigned.createAudience(token, '1122334455', { name: 'Unsigned' }))).toMatchObject({
      kind: 'refused',
      reason: 'invalid_request',
      detail: 'Invalid appsecret_proof provided in the API argument',
    });
  });
});
