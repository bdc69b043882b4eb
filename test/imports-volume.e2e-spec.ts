import { createHash } from 'node:crypto';
import { bearer, createUser, createWorkspace, login } from './support/factories.js';
import { finishedImport, type ImportBody, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { storedIdentifiers } from './support/stored-identifiers.js';

const ROWS = 200_000;
const BAD_EMAIL_EVERY = 997;
const BAD_TRAIT_EVERY = 1999;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const phoneOf = (i: number) => `+1415${String(i).padStart(7, '0')}`;

/** The file, generated as it is sent: chunks of 1,000 rows, never the whole file in memory. */
async function* file(): AsyncGenerator<string> {
  yield 'external_id,email,phone,first_name,last_name,country_code,postal_code,ltv:number,plan\n';
  for (let start = 1; start <= ROWS; start += 1000) {
    let chunk = '';
    for (let i = start; i < start + 1000 && i <= ROWS; i++) {
      const email = i % BAD_EMAIL_EVERY === 0 ? `broken${i}@` : `Person.${i}@Example.com`;
      const ltv = i % BAD_TRAIT_EVERY === 0 ? 'lots' : String(i / 100);
      chunk += `vol-${i},${email},${phoneOf(i)},First${i},Last${i},US,94107,${ltv},plan-${i % 3}\n`;
    }
    yield chunk;
  }
}

/** SPEC 10.1: a 200,000-row CSV through HTTP, streamed, staged, merged by the job. */
describe('imports at volume', () => {
  let api: TestApp;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '1' });
    const workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
  });
  afterAll(() => api.close());

  it('imports 200,000 rows: counts, rejects by reason, and the stored hashes of known rows', async () => {
    const response = await postImport(api, auth, file());
    expect(response.status).toBe(202);
    const queued = (await response.json()) as ImportBody;
    const badEmails = Math.floor(ROWS / BAD_EMAIL_EVERY);
    const badTraits = Math.floor(ROWS / BAD_TRAIT_EVERY);
    expect(queued).toMatchObject({ status: 'queued', rows_total: ROWS, rows_rejected: badEmails + badTraits });
    const done = await finishedImport(api, auth, queued.id, 240_000);
    expect(done).toMatchObject({
      status: 'succeeded',
      rows_total: ROWS,
      rows_accepted: ROWS - badEmails - badTraits,
      rows_rejected: badEmails + badTraits,
      rejected_by_reason: { invalid_email: badEmails, invalid_trait_value: badTraits },
    });
    expect(done.errors_sample).toHaveLength(100);
    expect(done.errors_sample[0]).toEqual({ line: BAD_EMAIL_EVERY + 1, errors: { 'identifiers.email': ['invalid_email'] } });
    const [{ n: people }] = await api.dataSource.query(`SELECT count(*)::int AS n FROM people WHERE external_id LIKE 'vol-%'`);
    expect(people).toBe(ROWS - badEmails - badTraits);
    const [{ n: staged }] = await api.dataSource.query('SELECT count(*)::int AS n FROM import_rows');
    expect(staged).toBe(0);

    for (const i of [1, 12_345, 199_999]) {
      const rows = await storedIdentifiers(api.dataSource, 'p.external_id = $1', [`vol-${i}`]);
      const expected = [
        { platform: 'google', kind: 'email', hash: sha256(`person.${i}@example.com`) },
        { platform: 'google', kind: 'first_name', hash: sha256(`first${i}`) },
        { platform: 'google', kind: 'last_name', hash: sha256(`last${i}`) },
        { platform: 'google', kind: 'phone', hash: sha256(phoneOf(i)) },
        { platform: 'meta', kind: 'country', hash: sha256('us') },
        { platform: 'meta', kind: 'email', hash: sha256(`person.${i}@example.com`) },
        { platform: 'meta', kind: 'first_name', hash: sha256(`first${i}`) },
        { platform: 'meta', kind: 'last_name', hash: sha256(`last${i}`) },
        { platform: 'meta', kind: 'phone', hash: sha256(phoneOf(i).slice(1)) },
        { platform: 'meta', kind: 'zip', hash: sha256('94107') },
      ];
      expect(rows).toEqual(expected.sort((a, b) => `${a.platform}${a.kind}`.localeCompare(`${b.platform}${b.kind}`)));
      const [person] = await api.dataSource.query(
        'SELECT traits, matched_keys, country_code, postal_code FROM people WHERE external_id = $1',
        [`vol-${i}`],
      );
      expect(person).toEqual({
        traits: { ltv: i / 100, plan: `plan-${i % 3}` },
        matched_keys: ['email', 'phone', 'address'],
        country_code: 'US',
        postal_code: '94107',
      });
    }
  }, 300_000);
});
