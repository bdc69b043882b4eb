import { createHash } from 'node:crypto';
import { apiKeyHeader, bearer, createApiKey, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { storedIdentifiers } from './support/stored-identifiers.js';

const BASE = '/api/v1/people/';
const BATCH = '/api/v1/people/batch/';

type Person = Record<string, unknown> & { id: number; external_id: string };
interface BatchResult {
  created: number;
  updated: number;
  rejected: { index: number; errors: Record<string, string[]> }[];
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('people (SPEC 10.1)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
  });
  afterAll(() => api.close());

  const batch = (people: unknown, headers = auth) => api.request(BATCH, send('POST', { people }, headers));
  const get = (path: string, headers = auth) => api.request(path, { headers });
  const patch = (id: number, body: unknown) => api.request(`${BASE}${id}/`, send('PATCH', body, auth));
  const remove = (id: number) => api.request(`${BASE}${id}/`, send('DELETE', undefined, auth));

  async function batchOk(people: unknown[]): Promise<BatchResult> {
    const response = await batch(people);
    expect(response.status).toBe(200);
    return (await response.json()) as BatchResult;
  }

  async function byExternalId(externalId: string): Promise<Person> {
    const response = await get(`${BASE}?external_id=${encodeURIComponent(externalId)}`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { count: number; results: Person[] };
    expect(page.count).toBe(1);
    return page.results[0]!;
  }

  /** The stored hashes of a person as `platform/kind` → hex, read straight from the table. */
  async function storedHashes(personId: number): Promise<Record<string, string[]>> {
    const rows = await storedIdentifiers(api.dataSource, 'p.customer_id = $1 AND p.id = $2', [workspace.customerId, personId]);
    const hashes: Record<string, string[]> = {};
    for (const row of rows) (hashes[`${row.platform}/${row.kind}`] ??= []).push(row.hash);
    return hashes;
  }

  it('creates people, answers each field, and never returns an identifier', async () => {
    const result = await batchOk([
      {
        external_id: 'crm-1',
        identifiers: { email: 'Ada@Example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'gb', postal_code: 'SW1A 1AA' },
        traits: { plan: 'pro', ltv: 420.5, newsletter: true },
        consent: { ad_user_data: 'granted' },
      },
    ]);
    expect(result).toEqual({ created: 1, updated: 0, rejected: [] });
    const person = await byExternalId('crm-1');
    expect(person).toEqual({
      id: expect.any(Number),
      customer: workspace.customerId,
      external_id: 'crm-1',
      matched_keys: ['email', 'address'],
      traits: { plan: 'pro', ltv: 420.5, newsletter: true },
      consent: { ad_user_data: 'granted', ad_personalization: 'unspecified' },
      audiences: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    const detail = await get(`${BASE}${person.id}/`);
    expect(detail.status).toBe(200);
    expect(await detail.json()).toEqual(person);
  });

  it('upserts by external_id: merges traits (null removes a key), keeps consent not named, replaces only the identifiers named', async () => {
    await batchOk([{ external_id: 'crm-2', identifiers: { email: 'two@example.com', phone: '+15551230002' }, traits: { a: 1, b: 'x' } }]);
    const before = await byExternalId('crm-2');
    const hashesBefore = await storedHashes(before.id);
    const result = await batchOk([
      {
        external_id: 'crm-2',
        identifiers: { email: 'second@example.com' },
        traits: { b: null, c: false },
        consent: { ad_personalization: 'denied' },
      },
    ]);
    expect(result).toEqual({ created: 0, updated: 1, rejected: [] });
    const after = await byExternalId('crm-2');
    expect(after.id).toBe(before.id);
    expect(after.traits).toEqual({ a: 1, c: false });
    expect(after.consent).toEqual({ ad_user_data: 'unspecified', ad_personalization: 'denied' });
    expect(after.matched_keys).toEqual(['email', 'phone']);
    const hashesAfter = await storedHashes(before.id);
    expect(hashesAfter['google/phone']).toEqual(hashesBefore['google/phone']);
    expect(hashesAfter['google/email']).toEqual([sha256('second@example.com')]);
  });

  it('stores the SHA-256 each platform wants (Gmail rule for Google, phone with and without +)', async () => {
    await batchOk([
      {
        external_id: 'hash-1',
        identifiers: {
          email: ' Cloudy.SanFrancisco+Shopping@gmail.com ',
          phone: '(800) 555-0100',
          country_code: 'US',
          postal_code: '94043-1351',
          first_name: ' John ',
          last_name: "O'Neil",
        },
      },
      { external_id: 'hash-2', identifiers: { phone: '+44 20 7946 0958', email: 'user.name+NYC@Example.com' } },
    ]);
    const first = await storedHashes((await byExternalId('hash-1')).id);
    expect(first).toEqual({
      'google/email': [sha256('cloudysanfrancisco@gmail.com')],
      'google/first_name': [sha256('john')],
      'google/last_name': [sha256("o'neil")],
      'google/phone': [sha256('+18005550100')],
      'meta/country': [sha256('us')],
      'meta/email': [sha256('cloudy.sanfrancisco+shopping@gmail.com')],
      'meta/first_name': [sha256('john')],
      'meta/last_name': [sha256('oneil')],
      'meta/phone': [sha256('18005550100')],
      'meta/zip': [sha256('94043')],
    });
    const second = await storedHashes((await byExternalId('hash-2')).id);
    expect(second['google/phone']).toEqual([sha256('+442079460958')]);
    expect(second['meta/phone']).toEqual([sha256('442079460958')]);
    expect(second['google/email']).toEqual([sha256('user.name+nyc@example.com')]);
    const [row] = await api.dataSource.query(
      `SELECT country_code, postal_code FROM people WHERE customer_id = $1 AND external_id = 'hash-1'`,
      [workspace.customerId],
    );
    expect(row).toEqual({ country_code: 'US', postal_code: '94043-1351' });
  });

  it('derives external_id from the Google email hash, else the phone hash', async () => {
    await batchOk([{ identifiers: { email: 'Derived.One@gmail.com' } }, { identifiers: { phone: '+15551239999' } }]);
    await byExternalId(`email:${sha256('derivedone@gmail.com').slice(0, 32)}`);
    await byExternalId(`phone:${sha256('+15551239999').slice(0, 32)}`);
  });

  it('rejects bad rows with their index and codes, and applies the good ones in the same batch', async () => {
    const result = await batchOk([
      { external_id: 'good-1', identifiers: { email: 'good1@example.com' } },
      { external_id: 'bad-1', identifiers: { email: 'not-an-email' } },
      { identifiers: { first_name: 'Nobody' } },
      { external_id: 'bad-2', traits: { 'bad key!': 1 } },
      { external_id: 'bad-3', traits: { long: 'x'.repeat(1001), nested: { a: 1 } } },
      { external_id: 'bad-4', consent: { ad_user_data: 'yes' } },
      { external_id: 'bad-5', surprise: 1 },
      { external_id: 'good-1', identifiers: { email: 'again@example.com' } },
      'not an object',
      { external_id: 'bad-6', traits: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) },
      { external_id: 'bad-7', identifiers: { phone: '12', mobile_ad_id: 'nope' } },
    ]);
    expect(result.created).toBe(1);
    expect(result.updated).toBe(0);
    expect(result.rejected).toEqual([
      { index: 1, errors: { 'identifiers.email': ['invalid_email'] } },
      { index: 2, errors: { external_id: ['missing_external_id'] } },
      { index: 3, errors: { traits: ['invalid_trait_key'] } },
      { index: 4, errors: { 'traits.long': ['invalid_trait_value'], 'traits.nested': ['invalid_trait_value'] } },
      { index: 5, errors: { 'consent.ad_user_data': ['invalid_consent'] } },
      { index: 6, errors: { surprise: ['unknown_field'] } },
      { index: 7, errors: { external_id: ['duplicate_external_id'] } },
      { index: 8, errors: { non_field_errors: ['invalid_person'] } },
      { index: 9, errors: { traits: ['too_many_traits'] } },
      { index: 10, errors: { 'identifiers.phone': ['invalid_phone'], 'identifiers.mobile_ad_id': ['invalid_mobile_ad_id'] } },
    ]);
    const missing = await get(`${BASE}?external_id=bad-1`);
    expect(((await missing.json()) as { count: number }).count).toBe(0);
  });

  it('refuses a batch of 1,001 rows, and a body without a list, with 400 under `people`', async () => {
    const tooMany = await batch(Array.from({ length: 1001 }, (_, i) => ({ external_id: `n${i}` })));
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { errors: Record<string, string[]> }).errors.people).toEqual([
      'Ensure this list has no more than 1000 items.',
    ]);
    const notList = await batch({ external_id: 'x' });
    expect(notList.status).toBe(400);
    const unknown = await api.request(BATCH, send('POST', { people: [], extra: 1 }, auth));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: Record<string, string[]> }).errors.extra).toEqual(['Unknown field.']);
  });

  it('accepts 1,000 rows in one batch', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      external_id: `bulk-${i}`,
      identifiers: { email: `bulk${i}@example.com` },
      traits: { i },
    }));
    expect(await batchOk(rows)).toEqual({ created: 1000, updated: 0, rejected: [] });
    expect(await batchOk(rows.slice(0, 10))).toEqual({ created: 0, updated: 10, rejected: [] });
  });

  it('applies concurrent batches that name the same people without a deadlock or a lost row', async () => {
    const rows = (offset: number) =>
      Array.from({ length: 200 }, (_, i) => ({
        external_id: `race-${(i + offset) % 300}`,
        identifiers: { email: `race${(i + offset) % 300}@example.com` },
      }));
    const responses = await Promise.all([0, 50, 100, 150].map((offset) => batch(rows(offset))));
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    const results = (await Promise.all(responses.map((response) => response.json()))) as BatchResult[];
    expect(results.reduce((sum, result) => sum + result.created + result.updated, 0)).toBe(800);
    expect(results.reduce((sum, result) => sum + result.created, 0)).toBe(300);
    const [{ count }] = await api.dataSource.query(
      `SELECT count(*)::int AS count FROM people WHERE customer_id = $1 AND external_id LIKE 'race-%'`,
      [workspace.customerId],
    );
    expect(count).toBe(300);
  });

  it('PATCH merges and replaces like a batch row, and puts bad fields under their path', async () => {
    await batchOk([{ external_id: 'patch-1', identifiers: { email: 'p1@example.com' }, traits: { x: 1 } }]);
    const person = await byExternalId('patch-1');
    const response = await patch(person.id, { traits: { x: null, y: 'z' }, identifiers: { email: null, phone: '+15551230101' }, id: 999 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Person;
    expect(body).toMatchObject({ id: person.id, external_id: 'patch-1', traits: { y: 'z' }, matched_keys: ['phone'] });
    expect(Object.keys(await storedHashes(person.id)).sort()).toEqual(['google/phone', 'meta/phone']);

    const bad = await patch(person.id, { identifiers: { email: 'nope' }, consent: { ad_user_data: 1 }, traits: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: unknown }).errors).toEqual({
      'identifiers.email': ['invalid_email'],
      'consent.ad_user_data': ['invalid_consent'],
      traits: ['invalid_traits'],
    });
    const unknown = await patch(person.id, { nickname: 'x' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: Record<string, string[]> }).errors.nickname).toEqual(['Unknown field.']);

    await batchOk([{ external_id: 'patch-2', identifiers: { email: 'p2@example.com' } }]);
    const taken = await patch(person.id, { external_id: 'patch-2' });
    expect(taken.status).toBe(400);
    expect(((await taken.json()) as { errors: unknown }).errors).toEqual({ external_id: ['external_id_taken'] });
    const renamed = await patch(person.id, { external_id: 'patch-1-renamed' });
    expect(((await renamed.json()) as Person).external_id).toBe('patch-1-renamed');
  });

  it('DELETE erases the person and its hashes at once; only a destination that was sent them keeps them, until its sync removes them', async () => {
    await batchOk([
      { external_id: 'erase-1', identifiers: { email: 'erase@example.com', mobile_ad_id: '6D92078A-8246-4BA4-AE5B-76104861E7DC' } },
    ]);
    const person = await byExternalId('erase-1');
    expect(Object.keys(await storedHashes(person.id)).length).toBeGreaterThan(0);
    expect((await remove(person.id)).status).toBe(204);
    expect((await get(`${BASE}${person.id}/`)).status).toBe(404);
    expect((await remove(person.id)).status).toBe(404);
    expect(await storedHashes(person.id)).toEqual({});
    // Sent to no destination: no row of the person is left anywhere (test/syncs.e2e-spec.ts covers the removal of one that was).
    const [left] = await api.dataSource.query(
      `SELECT (SELECT count(*) FROM people WHERE customer_id = $1 AND id = $2)::int
            + (SELECT count(*) FROM audience_members WHERE customer_id = $1 AND person_id = $2)::int
            + (SELECT count(*) FROM sync_sent_members WHERE customer_id = $1 AND person_id = $2)::int AS rows`,
      [workspace.customerId, person.id],
    );
    expect(left).toEqual({ rows: 0 });
  });

  it('lets viewers and read keys read, and refuses their writes', async () => {
    const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
    const readKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
    const writeKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'write' })).key);
    for (const headers of [viewer, readKey]) {
      expect((await get(BASE, headers)).status).toBe(200);
      expect((await batch([{ external_id: 'nope' }], headers)).status).toBe(403);
    }
    expect((await batch([{ external_id: 'by-key' }], writeKey)).status).toBe(200);
  });

  it('lists newest first, orders by external_id, and refuses an unknown ordering', async () => {
    const first = await get(`${BASE}?page_size=2`);
    const page = (await first.json()) as { results: Person[] };
    expect(page.results[0]!.id).toBeGreaterThan(page.results[1]!.id);
    const ordered = (await (await get(`${BASE}?ordering=external_id&page_size=3`)).json()) as { results: Person[] };
    const ids = ordered.results.map((person) => person.external_id);
    expect([...ids].sort()).toEqual(ids);
    expect((await get(`${BASE}?ordering=name`)).status).toBe(400);
  });

  it('answers other methods on /people/batch/ with 405 and Allow: POST, and a non-numeric id with 404', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const response = await api.request(BATCH, send(method, method === 'PATCH' ? {} : undefined, auth));
      expect({ method, status: response.status, allow: response.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
    }
    expect((await get(`${BASE}abc/`)).status).toBe(404);
    expect((await get(`${BASE}99999999999999999999/`)).status).toBe(404);
  });

  it('replays a batch with the same Idempotency-Key', async () => {
    const headers = { ...auth, 'idempotency-key': 'people-batch-1' };
    const first = await batch([{ external_id: 'idem-1' }], headers);
    const second = await batch([{ external_id: 'idem-1' }], headers);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual({ created: 1, updated: 0, rejected: [] });
  });
});
