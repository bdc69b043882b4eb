import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { bearer, createUser, createWorkspace, login, send } from './support/factories.js';
import { finishedImport, type ImportBody, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { storedIdentifiers } from './support/stored-identifiers.js';

/** Small, so the 413 tests send little; the long-line tests' 300 KiB lines fit under it. */
const LIMIT = 512 * 1024;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('imports (SPEC 10.1)', () => {
  let api: TestApp;
  let auth: Record<string, string>;
  let customerId: number;

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '1', IMPORT_MAX_BYTES: String(LIMIT), IMPORT_IDLE_TIMEOUT_MS: '2000' });
    const workspace = await createWorkspace(api);
    customerId = workspace.customerId;
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
  });
  afterAll(() => api.close());

  const stagedRows = async () => Number((await api.dataSource.query('SELECT count(*) AS n FROM import_rows'))[0].n);
  const mergeJobs = async () =>
    Number((await api.dataSource.query(`SELECT count(*) AS n FROM graphile_worker.jobs WHERE task_identifier = 'imports.merge'`))[0].n);

  it('imports a CSV: rows normalised, hashed, merged; rejects counted by reason with their line', async () => {
    const csv = [
      'external_id,email,phone,first_name,last_name,country_code,postal_code,ltv:number,vip:boolean,plan,consent_ad_user_data',
      'csv-1, Ada.Lovelace+x@Gmail.com ,+14155550100,Ada,Lovelace,US,94107,12.5,true,gold,granted',
      'csv-2,bad-email,,,,,,,,,',
      ',grace@example.org,,,,,,,,silver,',
      'csv-4,,,,,,,abc,,,',
      'csv-1,dup@example.org,,,,,,,,,',
    ].join('\n');
    const response = await postImport(api, auth, csv);
    expect(response.status).toBe(202);
    const queued = (await response.json()) as ImportBody;
    expect(queued).toMatchObject({
      status: 'queued',
      target: 'people',
      audience: null,
      mode: null,
      rows_total: 5,
      rows_accepted: 3,
      rows_rejected: 2,
    });
    const done = await finishedImport(api, auth, queued.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      rows_total: 5,
      rows_accepted: 2,
      rows_rejected: 3,
      rejected_by_reason: { invalid_email: 1, invalid_trait_value: 1, duplicate_external_id: 1 },
    });
    expect(done.errors_sample).toEqual([
      { line: 3, errors: { 'identifiers.email': ['invalid_email'] } },
      { line: 5, errors: { 'traits.ltv': ['invalid_trait_value'] } },
      { line: 6, errors: { external_id: ['duplicate_external_id'] } },
    ]);
    expect(await stagedRows()).toBe(0);
    const people = (await (await api.request('/api/v1/people/?ordering=external_id', { headers: auth })).json()) as {
      results: { external_id: string; traits: Record<string, unknown>; matched_keys: string[]; consent: Record<string, string> }[];
    };
    const ada = people.results.find((person) => person.external_id === 'csv-1')!;
    expect(ada.traits).toEqual({ ltv: 12.5, vip: true, plan: 'gold' });
    expect(ada.matched_keys).toEqual(['email', 'phone', 'address']);
    expect(ada.consent).toEqual({ ad_user_data: 'granted', ad_personalization: 'unspecified' });
    const grace = people.results.find((person) => person.external_id.startsWith('email:'))!;
    expect(grace.external_id).toBe(`email:${sha256('grace@example.org').slice(0, 32)}`);
    const hashes = await storedIdentifiers(api.dataSource, `p.external_id = 'csv-1'`);
    expect(hashes).toEqual(
      expect.arrayContaining([
        { platform: 'google', kind: 'email', hash: sha256('adalovelace@gmail.com') },
        { platform: 'meta', kind: 'email', hash: sha256('ada.lovelace+x@gmail.com') },
        { platform: 'google', kind: 'phone', hash: sha256('+14155550100') },
        { platform: 'meta', kind: 'phone', hash: sha256('14155550100') },
      ]),
    );
  });

  it('merges into stored people as a batch write does: traits merged, NDJSON null removes, named identifiers replaced', async () => {
    const batch = await api.request(
      '/api/v1/people/batch/',
      send(
        'POST',
        {
          people: [{ external_id: 'merge-1', identifiers: { email: 'old@example.org', phone: '+14155550199' }, traits: { a: 1, b: 'x' } }],
        },
        auth,
      ),
    );
    expect(batch.status).toBe(200);
    const ndjson = `${JSON.stringify({ external_id: 'merge-1', identifiers: { email: 'new@example.org' }, traits: { b: null, c: true } })}\n`;
    const response = await postImport(api, auth, ndjson, 'application/x-ndjson');
    expect(response.status).toBe(202);
    const done = await finishedImport(api, auth, ((await response.json()) as ImportBody).id);
    expect(done.status).toBe('succeeded');
    const [person] = (
      (await (await api.request('/api/v1/people/?external_id=merge-1', { headers: auth })).json()) as {
        results: { traits: unknown; matched_keys: string[] }[];
      }
    ).results;
    expect(person!.traits).toEqual({ a: 1, c: true });
    expect(person!.matched_keys).toEqual(['email', 'phone']);
    const emails = (await storedIdentifiers(api.dataSource, `p.external_id = 'merge-1'`)).filter(
      (row) => row.kind === 'email' && row.platform === 'google',
    );
    expect(emails.map((row) => row.hash)).toEqual([sha256('new@example.org')]);
  });

  /**
   * Stores `stored` twice by batch, as `<key>-batch` and `<key>-import`, then writes `identifiers`
   * to the first by batch and to the second by an NDJSON import: what each person keeps, side by side.
   */
  async function writtenBothWays(key: string, stored: Record<string, unknown>, identifiers: Record<string, unknown>) {
    const batch = (people: unknown[]) => api.request('/api/v1/people/batch/', send('POST', { people }, auth));
    const [byBatch, byImport] = [`${key}-batch`, `${key}-import`];
    expect((await batch([byBatch, byImport].map((external_id) => ({ external_id, identifiers: stored })))).status).toBe(200);
    expect((await batch([{ external_id: byBatch, identifiers }])).status).toBe(200);
    const response = await postImport(api, auth, `${JSON.stringify({ external_id: byImport, identifiers })}\n`, 'application/x-ndjson');
    expect(response.status).toBe(202);
    expect(await finishedImport(api, auth, ((await response.json()) as ImportBody).id)).toMatchObject({
      status: 'succeeded',
      rows_accepted: 1,
    });
    const person = async (externalId: string) => {
      const [row] = (await api.dataSource.query(
        'SELECT country_code, postal_code, mobile_ad_id, matched_keys FROM people WHERE external_id = $1',
        [externalId],
      )) as Record<string, unknown>[];
      return { ...row, hashes: await storedIdentifiers(api.dataSource, 'p.external_id = $1', [externalId]) };
    };
    return { batch: await person(byBatch), import: await person(byImport) };
  }

  it('removes a stored mobile ad id an NDJSON line names as null, as a batch write does', async () => {
    const written = await writtenBothWays(
      'madid',
      { email: 'madid@example.org', mobile_ad_id: '6D92078A-8246-4BA4-AE5B-76104861E7DC' },
      { mobile_ad_id: null },
    );
    expect(written.import).toEqual(written.batch);
    expect(written.import).toMatchObject({ mobile_ad_id: null, matched_keys: ['email'] });
  });

  const metaZip = (person: { hashes: { platform: string; kind: string; hash: string }[] }) =>
    person.hashes.filter((row) => row.platform === 'meta' && row.kind === 'zip').map((row) => row.hash);

  it('hashes a stored ZIP+4 for Meta in the US when a line gives the country, as a batch write does', async () => {
    const written = await writtenBothWays('zip-country', { email: 'zip1@example.org', postal_code: '94043-1351' }, { country_code: 'US' });
    expect(written.import).toEqual(written.batch);
    expect(metaZip(written.import)).toEqual([sha256('94043')]);
  });

  it('hashes a ZIP+4 for Meta in the stored country US when a line gives the postal code alone, as a batch write does', async () => {
    const written = await writtenBothWays('zip-postal', { email: 'zip2@example.org', country_code: 'US' }, { postal_code: '94043-1351' });
    expect(written.import).toEqual(written.batch);
    expect(metaZip(written.import)).toEqual([sha256('94043')]);
  });

  it('hashes a stored ZIP+4 for Meta without a country when a line removes the country, as a batch write does', async () => {
    const written = await writtenBothWays(
      'zip-no-country',
      { email: 'zip3@example.org', country_code: 'US', postal_code: '94043-1351' },
      { country_code: null },
    );
    expect(written.import).toEqual(written.batch);
    expect(written.import).toMatchObject({ country_code: null, postal_code: '94043-1351' });
    expect(metaZip(written.import)).toEqual([sha256('940431351')]);
  });

  it('reads columns named like a JavaScript object’s own methods (constructor, toString) as traits', async () => {
    const response = await postImport(api, auth, 'external_id,constructor,toString,hasOwnProperty\nctor-1,abc,def,ghi\n');
    expect(response.status).toBe(202);
    const done = await finishedImport(api, auth, ((await response.json()) as ImportBody).id);
    expect(done).toMatchObject({ status: 'succeeded', rows_accepted: 1, rows_rejected: 0, errors_sample: [] });
    // Like every object (SPEC section 3): its workspace, and when it last changed (the merge's end).
    expect(done.customer).toBe(customerId);
    expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(Date.parse(done.finished_at!));
    const [person] = (
      (await (await api.request('/api/v1/people/?external_id=ctor-1', { headers: auth })).json()) as { results: { traits: unknown }[] }
    ).results;
    expect(person!.traits).toEqual({ constructor: 'abc', toString: 'def', hasOwnProperty: 'ghi' });
  });

  it('reports a rejected row by its file line in a CRLF file whose quoted field holds a CRLF', async () => {
    const csv = 'external_id,email,note\r\nq-1,ok@example.com,"two\r\nlines"\r\nq-2,bad,x\r\n';
    const done = await finishedImport(api, auth, ((await (await postImport(api, auth, csv)).json()) as ImportBody).id);
    expect(done).toMatchObject({ status: 'succeeded', rows_total: 2, rows_accepted: 1, rows_rejected: 1 });
    expect(done.errors_sample).toEqual([{ line: 4, errors: { 'identifiers.email': ['invalid_email'] } }]);
  });

  it('refuses a trait column named __proto__ on each row, as a JSON body with that key is refused', async () => {
    const response = await postImport(api, auth, 'external_id,__proto__\nproto-1,abc\n');
    const done = await finishedImport(api, auth, ((await response.json()) as ImportBody).id);
    expect(done).toMatchObject({
      status: 'succeeded',
      rows_accepted: 0,
      rows_rejected: 1,
      errors_sample: [{ line: 2, errors: { traits: ['invalid_trait_key'] } }],
    });
  });

  it('fails a binary file with the reason in errors_sample, staging nothing', async () => {
    const response = await postImport(api, auth, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]));
    expect(response.status).toBe(202);
    const body = (await response.json()) as ImportBody;
    expect(body).toMatchObject({ status: 'failed', errors_sample: [{ line: 1, errors: { file: ['not_csv_or_ndjson'] } }] });
    expect(body.finished_at).not.toBeNull();
    expect(await stagedRows()).toBe(0);
  });

  it('fails a CSV with no usable column', async () => {
    const response = await postImport(api, auth, 'colour,size\nred,10\n');
    const body = (await response.json()) as ImportBody;
    expect(body).toMatchObject({ status: 'failed', errors_sample: [{ line: 1, errors: { file: ['no_usable_column'] } }] });
  });

  it('rejects a row of 10,000 columns as a row, and refuses a line past the record limit as a file', async () => {
    const wide = `external_id,email\nwide-1,wide@example.org\n${'x,'.repeat(9999)}x\nwide-3,wide3@example.org\n`;
    const done = await finishedImport(api, auth, ((await (await postImport(api, auth, wide)).json()) as ImportBody).id);
    expect(done).toMatchObject({ status: 'succeeded', rows_total: 3, rows_accepted: 2, rejected_by_reason: { wrong_column_count: 1 } });
    expect(done.errors_sample).toEqual([{ line: 3, errors: { non_field_errors: ['wrong_column_count'] } }]);

    const long = `external_id,plan\nlong-1,${'y'.repeat(300 * 1024)}\n`;
    const refused = (await (await postImport(api, auth, long)).json()) as ImportBody;
    expect(refused).toMatchObject({ status: 'failed', errors_sample: [{ errors: { file: ['record_too_large'] } }] });
    const longLine = `${JSON.stringify({ external_id: 'n', traits: { t: 'z'.repeat(300 * 1024) } })}\n`;
    const refusedLine = (await (await postImport(api, auth, longLine, 'application/x-ndjson')).json()) as ImportBody;
    expect(refusedLine).toMatchObject({ status: 'failed', errors_sample: [{ line: 1, errors: { file: ['record_too_large'] } }] });
    expect(await stagedRows()).toBe(0);
  });

  it('answers target=audience with an unknown audience 400 under audience, and other routes 415 for CSV', async () => {
    const audience = await postImport(api, auth, 'external_id\na\n', 'text/csv', 'target=audience&audience=99999999&mode=add');
    expect(audience.status).toBe(400);
    expect(((await audience.json()) as { errors: Record<string, unknown> }).errors.audience).toBeDefined();
    const other = await api.request('/api/v1/people/batch/', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: 'a,b\n',
    });
    expect(other.status).toBe(415);
  });

  /** Sends the head and some rows by hand, then stops (`stall`) or drops the connection. */
  function partialUpload(stall: boolean): Promise<string> {
    return new Promise((resolve) => {
      const request = httpRequest(`${api.baseUrl}/api/v1/imports/?target=people`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/csv', 'transfer-encoding': 'chunked' },
      });
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(`${response.statusCode} ${text}`));
      });
      request.on('error', () => resolve('connection closed'));
      request.write('external_id,email\n');
      for (let i = 0; i < 2000; i++) request.write(`cut-${i},cut${i}@example.org\n`);
      if (!stall) setTimeout(() => request.destroy(), 300);
    });
  }

  const uploadState = async () => {
    // What an upload in progress would hold: an open COPY, or a transaction left open.
    const sessions: { state: string }[] = await api.dataSource.query(
      `SELECT state FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND (query LIKE 'COPY import_rows%' OR state LIKE 'idle in transaction%')
         AND state <> 'idle'`,
    );
    return {
      sessions: sessions.length,
      staged: await stagedRows(),
      jobs: await mergeJobs(),
      imports: Number((await api.dataSource.query('SELECT count(*) AS n FROM imports'))[0].n),
    };
  };

  it('leaves no staged row, no import and no job when the client drops the upload', async () => {
    const before = await uploadState();
    expect(await partialUpload(false)).toBe('connection closed');
    for (let tries = 0; tries < 50 && (await uploadState()).sessions > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await uploadState()).toEqual({ ...before, sessions: 0 });
  });

  it('drops an upload that sends nothing for IMPORT_IDLE_TIMEOUT_MS, staging nothing', async () => {
    const before = await uploadState();
    const started = Date.now();
    const outcome = await partialUpload(true);
    expect(outcome).toBe('connection closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    for (let tries = 0; tries < 50 && (await uploadState()).sessions > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await uploadState()).toEqual({ ...before, sessions: 0 });
  });

  it('answers a body over IMPORT_MAX_BYTES 413 and stages nothing, announced or streamed', async () => {
    const before = await uploadState();
    const row = 'big-0000000,big@example.org\n';
    const file = `external_id,email\n${row.repeat(Math.ceil(LIMIT / row.length) + 10)}`;
    const announced = await postImport(api, auth, file);
    expect(announced.status).toBe(413);
    async function* chunks() {
      for (let sent = 0; sent < LIMIT * 2; sent += 16 * 1024) yield file.slice(0, 16 * 1024);
    }
    const streamed = await postImport(api, auth, chunks()).catch(() => undefined);
    if (streamed !== undefined) expect(streamed.status).toBe(413);
    for (let tries = 0; tries < 50 && (await uploadState()).sessions > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await uploadState()).toEqual({ ...before, sessions: 0 });
  });
});
