import { Writable } from 'node:stream';
import { createLogger } from '../src/logging/logger.js';
import { bearer, createUser, createWorkspace, login, send } from './support/factories.js';
import { finishedImport, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { storedIdentifiers } from './support/stored-identifiers.js';

/**
 * SPEC 10 "Privacy by construction": raw emails, phones and names are hashed on arrival and never
 * stored or logged. The identifiers below are chosen so that no part of them is hexadecimal text
 * a hash could contain by chance (names with letters past `f`, phones with distinctive digits).
 */
const PEOPLE = [
  {
    external_id: 'privacy-1',
    identifiers: {
      email: ' Quintus.Zyworth+Promo@Gmail.com ',
      phone: '+1 (415) 739-2864',
      first_name: 'Quintus',
      last_name: 'Zyworth',
      country_code: 'US',
      postal_code: '94107',
    },
  },
  {
    external_id: 'privacy-2',
    identifiers: {
      email: ['Wilhelmina.Quorvath@Example.org', 'wq-second@Example.net'],
      phone: ['07700 900461', '+44 7700 900462'],
      country_code: 'GB',
    },
  },
  { identifiers: { email: 'Yvonne.Kowalczyk@Example.com', first_name: 'Yvonne', last_name: 'Kowalczyk' } },
  { identifiers: { phone: '+49 30 901820357', first_name: 'Ludwig', last_name: 'Sztrovsky' } },
  // Rejected rows go through the same code: their values must not leak through an error either.
  { external_id: 'privacy-bad', identifiers: { email: 'Rupert.Vixwell@', phone: '12', first_name: 'Rupert' } },
];

/** Every raw value, its trimmed and lowercased forms and the normal forms hashing starts from. */
const RAW_VALUES = [
  'Quintus.Zyworth+Promo@Gmail.com',
  'quintus.zyworth+promo@gmail.com',
  'quintuszyworth@gmail.com',
  '+1 (415) 739-2864',
  '+14157392864',
  '14157392864',
  '4157392864',
  'Quintus',
  'quintus',
  'Zyworth',
  'zyworth',
  'Wilhelmina.Quorvath@Example.org',
  'wilhelmina.quorvath@example.org',
  'wq-second@Example.net',
  'wq-second@example.net',
  '07700 900461',
  '447700900461',
  '7700900461',
  '447700900462',
  'Yvonne.Kowalczyk@Example.com',
  'yvonne.kowalczyk@example.com',
  'Yvonne',
  'yvonne',
  'Kowalczyk',
  'kowalczyk',
  '4930901820357',
  '30901820357',
  'Ludwig',
  'ludwig',
  'Sztrovsky',
  'sztrovsky',
  'Rupert.Vixwell@',
  'rupert.vixwell',
  'Rupert',
  'rupert',
];

describe('privacy by construction (SPEC 10)', () => {
  let api: TestApp;
  const logText: string[] = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logText.push(chunk.toString());
        callback();
      },
    });
    api = await startTestApp({}, { logger: createLogger({ logLevel: 'debug' }, stream) });
    const workspace = await createWorkspace(api);
    const auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const responses: string[] = [];
    const call = async (path: string, init: RequestInit) => {
      const response = await api.request(path, init);
      responses.push(await response.text());
      return response;
    };
    const batch = await call('/api/v1/people/batch/', send('POST', { people: PEOPLE }, { ...auth, 'idempotency-key': 'privacy-batch' }));
    expect(batch.status).toBe(200);
    // A replay, a PATCH (good and bad), a list and an erasure: every path that touches identifiers.
    await call('/api/v1/people/batch/', send('POST', { people: PEOPLE }, { ...auth, 'idempotency-key': 'privacy-batch' }));
    const list = await call('/api/v1/people/?page_size=100', { headers: auth });
    const people = (JSON.parse(responses[responses.length - 1]!) as { results: { id: number; external_id: string }[] }).results;
    expect(list.status).toBe(200);
    expect(people).toHaveLength(4);
    const first = people.find((person) => person.external_id === 'privacy-1');
    const second = people.find((person) => person.external_id === 'privacy-2');
    await call(`/api/v1/people/${first!.id}/`, send('PATCH', { identifiers: { last_name: 'Zyworth', email: 'Rupert.Vixwell@' } }, auth));
    await call(`/api/v1/people/${first!.id}/`, send('PATCH', { identifiers: { phone: '+1 (415) 739-2864' } }, auth));
    await call(`/api/v1/people/${second!.id}/`, send('DELETE', undefined, auth));
    for (const text of responses) for (const value of RAW_VALUES) expect(text).not.toContain(value);
  });
  afterAll(() => api.close());

  it('keeps no raw identifier in any row of any table, read as text with bytea as hex and as escape', async () => {
    const tables: { table_name: string }[] = await api.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining(['people', 'import_rows', 'sync_sent_members']));
    const dumps: Record<string, string> = {};
    const runner = api.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      for (const output of ['hex', 'escape']) {
        await runner.query(`SET LOCAL bytea_output = '${output}'`);
        let dump = '';
        for (const { table_name } of tables) {
          const rows: { row: string }[] = await runner.query(`SELECT t::text AS row FROM "${table_name}" t`);
          dump += `${rows.map((row) => row.row).join('\n')}\n`;
        }
        dumps[output] = dump;
      }
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    // The hashes are there (so the dump reads what it should), the raw values are not.
    expect(dumps.hex).toMatch(/\\x[0-9a-f]{64}/);
    expect(dumps.hex).toContain('privacy-1');
    for (const dump of Object.values(dumps)) {
      for (const value of RAW_VALUES) {
        expect(dump.includes(value)).toBe(false);
        expect(dump.includes(Buffer.from(value).toString('hex'))).toBe(false);
      }
    }
  });

  it('writes no raw identifier to the log', () => {
    const text = logText.join('');
    expect(text).toContain('"msg":"request"');
    for (const value of RAW_VALUES) expect(text.includes(value)).toBe(false);
  });
});

/**
 * A person's hashes are packed on their own row (`people.google_identifiers`,
 * `people.meta_identifiers`; issue 27), so they go wherever the row goes: every write path leaves
 * exactly the hashes it names, and erasure or a workspace's deletion leaves none.
 */
describe('every write path keeps exactly its hashes, and no hash outlives its person', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '1' });
  });
  afterAll(() => api.close());

  const hashesOf = async (customerId: number, personId?: number) =>
    (await storedIdentifiers(api.dataSource, 'p.customer_id = $1 AND ($2::bigint IS NULL OR p.id = $2)', [customerId, personId ?? null]))
      .length;

  /** A workspace with people written by every path: a batch, an import over them (replacing named hashes), a PATCH. */
  async function populatedWorkspace(): Promise<{ customerId: number; auth: Record<string, string> }> {
    const workspace = await createWorkspace(api);
    const auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const people = ['a', 'b', 'c'].map((name) => ({
      external_id: `orphan-${name}`,
      identifiers: { email: `${name}@example.com`, phone: '+14155550100', first_name: name, last_name: 'x' },
    }));
    expect((await api.request('/api/v1/people/batch/', send('POST', { people }, auth))).status).toBe(200);
    const csv = ['external_id,email,first_name', 'orphan-a,a2@example.com,a', 'orphan-b,b2@example.com,b', 'orphan-d,d@example.com,d'].join(
      '\n',
    );
    const queued = (await (await postImport(api, auth, csv)).json()) as { id: number };
    expect((await finishedImport(api, auth, queued.id)).status).toBe('succeeded');
    const list = (await (await api.request('/api/v1/people/?page_size=100', { headers: auth })).json()) as {
      results: { id: number; external_id: string }[];
    };
    const c = list.results.find((person) => person.external_id === 'orphan-c')!;
    expect((await api.request(`/api/v1/people/${c.id}/`, send('PATCH', { identifiers: { email: 'c2@example.com' } }, auth))).status).toBe(
      200,
    );
    return { customerId: workspace.customerId, auth };
  }

  it('keeps every hash of a written person and none of an erased one', async () => {
    const { customerId, auth } = await populatedWorkspace();
    // a, b, c: email, phone, first and last name for both platforms; d (imported): email and first name.
    // The import replaced a's and b's emails and c's PATCH its email: still one email per platform each.
    expect(await hashesOf(customerId)).toBe(3 * 8 + 4);
    const list = (await (await api.request('/api/v1/people/?page_size=100', { headers: auth })).json()) as {
      results: { id: number; external_id: string }[];
    };
    const a = list.results.find((person) => person.external_id === 'orphan-a')!;
    expect((await api.request(`/api/v1/people/${a.id}/`, send('DELETE', undefined, auth))).status).toBe(204);
    expect(await hashesOf(customerId)).toBe(2 * 8 + 4);
    expect(await hashesOf(customerId, a.id)).toBe(0);
  });

  it("deletes a workspace's hashes with its people when the workspace is deleted", async () => {
    const { customerId } = await populatedWorkspace();
    expect(await hashesOf(customerId)).toBeGreaterThan(0);
    // No route deletes a workspace; an operator would remove its users, then the customer, whose
    // foreign keys cascade to its people.
    await api.dataSource.transaction(async (manager) => {
      await manager.query('DELETE FROM users WHERE customer_id = $1', [customerId]);
      await manager.query('DELETE FROM customers WHERE id = $1', [customerId]);
    });
    expect(Number((await api.dataSource.query('SELECT count(*) AS n FROM people WHERE customer_id = $1', [customerId]))[0].n)).toBe(0);
    expect(await hashesOf(customerId)).toBe(0);
  });
});
