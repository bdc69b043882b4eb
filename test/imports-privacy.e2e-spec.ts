import { Writable } from 'node:stream';
import { TenantContext } from '../src/common/tenancy/tenant-context.js';
import { Tenant } from '../src/common/tenancy/tenant.js';
import { ImportsService } from '../src/imports/imports.service.js';
import { createLogger } from '../src/logging/logger.js';
import { bearer, createUser, createWorkspace, login } from './support/factories.js';
import { type ImportBody, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * SPEC 10 "Privacy by construction" for imports: raw identifiers are hashed in the API process as
 * each row arrives, so neither the staged rows nor the merged people nor the log ever hold them.
 * Values are chosen so that no part of them is hexadecimal text a hash could contain by chance.
 */
const CSV = [
  'external_id,email,phone,first_name,last_name,country_code,postal_code,plan',
  'import-privacy-1, Quillon.Vextrum+Sale@Gmail.com ,+1 (415) 739-2864,Quillon,Vextrum,US,94107,gold',
  ',Wolfrik.Zanthos@Example.org,07700 900461,Wolfrik,Zanthos,GB,,',
  'import-privacy-bad,Ruxwell.Kyprian@,12,Ruxwell,,,,',
].join('\n');
const NDJSON = [
  JSON.stringify({
    external_id: 'import-privacy-3',
    identifiers: { email: ['Yzolda.Mirkovitz@Example.com'], first_name: 'Yzolda', last_name: 'Mirkovitz' },
  }),
  JSON.stringify({ identifiers: { phone: '+49 30 901820357', first_name: 'Ludowyk', last_name: 'Sztravny' } }),
  JSON.stringify({ external_id: 'import-privacy-bad2', identifiers: { email: 'Xorvyn.Pell@', phone: '99' } }),
].join('\n');

const RAW_VALUES = [
  'Quillon.Vextrum+Sale@Gmail.com',
  'quillon.vextrum+sale@gmail.com',
  'quillonvextrum@gmail.com',
  '+1 (415) 739-2864',
  '+14157392864',
  '14157392864',
  '4157392864',
  'Quillon',
  'quillon',
  'Vextrum',
  'vextrum',
  'Wolfrik.Zanthos@Example.org',
  'wolfrik.zanthos@example.org',
  '07700 900461',
  '447700900461',
  '7700900461',
  'Wolfrik',
  'wolfrik',
  'Zanthos',
  'zanthos',
  'Ruxwell.Kyprian@',
  'ruxwell.kyprian',
  'Ruxwell',
  'ruxwell',
  'Yzolda.Mirkovitz@Example.com',
  'yzolda.mirkovitz@example.com',
  'Yzolda',
  'yzolda',
  'Mirkovitz',
  'mirkovitz',
  '4930901820357',
  '30901820357',
  'Ludowyk',
  'ludowyk',
  'Sztravny',
  'sztravny',
  'Xorvyn.Pell@',
  'xorvyn.pell',
];

describe('imports: privacy by construction (SPEC 10)', () => {
  let api: TestApp;
  let auth: Record<string, string>;
  let customerId: number;
  const logText: string[] = [];
  const responses: string[] = [];
  const dumps: string[] = [];

  /** Every row of every table as text, with bytea as hex and as escape. */
  async function dumpAll(): Promise<string> {
    const tables: { table_name: string }[] = await api.dataSource.query(
      `SELECT table_schema || '.' || table_name AS table_name FROM information_schema.tables
       WHERE table_schema IN ('public', 'graphile_worker') AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    let dump = '';
    const runner = api.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      for (const output of ['hex', 'escape']) {
        await runner.query(`SET LOCAL bytea_output = '${output}'`);
        for (const { table_name } of tables) {
          const rows: { row: string }[] = await runner.query(`SELECT t::text AS row FROM ${table_name} t`);
          dump += `${rows.map((row) => row.row).join('\n')}\n`;
        }
      }
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    return dump;
  }

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logText.push(chunk.toString());
        callback();
      },
    });
    // No workers: the staged rows are read before the merge, then the merge is run by hand.
    api = await startTestApp({}, { logger: createLogger({ logLevel: 'debug' }, stream) });
    const workspace = await createWorkspace(api);
    customerId = workspace.customerId;
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const ids: number[] = [];
    for (const [body, type] of [
      [CSV, 'text/csv'],
      [NDJSON, 'application/x-ndjson'],
    ] as const) {
      const response = await postImport(api, auth, body, type);
      const text = await response.text();
      responses.push(text);
      expect(response.status).toBe(202);
      ids.push((JSON.parse(text) as ImportBody).id);
    }
    const staged: { n: string }[] = await api.dataSource.query('SELECT count(*) AS n FROM import_rows');
    expect(Number(staged[0]!.n)).toBe(4);
    dumps.push(await dumpAll());
    const imports = api.app.get(ImportsService);
    for (const id of ids) await api.app.get(TenantContext).run(Tenant.forOperator(customerId), () => imports.merge(id));
    for (const id of ids) responses.push(await (await api.request(`/api/v1/imports/${id}/`, { headers: auth })).text());
    responses.push(await (await api.request('/api/v1/people/?page_size=100', { headers: auth })).text());
    dumps.push(await dumpAll());
  });
  afterAll(() => api.close());

  it('keeps no raw identifier in any table, staged or merged', () => {
    expect(dumps[0]).toContain('import-privacy-1');
    expect(dumps[0]).toMatch(/\\x[0-9a-f]{64}/);
    expect(dumps[1]).toContain('import-privacy-3');
    for (const dump of dumps) {
      for (const value of RAW_VALUES) {
        expect({ value, found: dump.includes(value) }).toEqual({ value, found: false });
        expect({ value, found: dump.includes(Buffer.from(value).toString('hex')) }).toEqual({ value, found: false });
      }
    }
  });

  it('returns no raw identifier in any answer, rejected rows included', () => {
    expect(responses.join('\n')).toContain('invalid_email');
    for (const text of responses)
      for (const value of RAW_VALUES) expect({ value, found: text.includes(value) }).toEqual({ value, found: false });
  });

  it('writes no raw identifier to the log', () => {
    const text = logText.join('');
    expect(text).toContain('"msg":"request"');
    for (const value of RAW_VALUES) expect({ value, found: text.includes(value) }).toEqual({ value, found: false });
  });
});
