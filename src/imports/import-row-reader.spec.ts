import { createHash } from 'node:crypto';
import { csvRecordToPerson, ImportFileError, isRejected, readCsvHeader, readImportRow, type StagedRow } from './import-row-reader.js';
import { eachIdentifier } from '../people/person-identifiers.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return error instanceof ImportFileError ? error.code : 'other';
  }
  return undefined;
}

describe('import CSV header', () => {
  it('needs a column that can key a row', () => {
    expect(codeOf(() => readCsvHeader(['colour', 'size']))).toBe('no_usable_column');
    expect(codeOf(() => readCsvHeader(['email']))).toBeUndefined();
    expect(codeOf(() => readCsvHeader(['phone_sha256', 'plan']))).toBeUndefined();
  });

  it('refuses a repeated column and more than 1,000 columns', () => {
    expect(codeOf(() => readCsvHeader(['external_id', 'plan', 'plan']))).toBe('duplicate_column');
    expect(codeOf(() => readCsvHeader(['external_id', ...Array.from({ length: 1000 }, (_, index) => `t${index}`)]))).toBe(
      'too_many_columns',
    );
  });
});

describe('import CSV record', () => {
  const layout = readCsvHeader(['external_id', 'email', 'ltv:number', 'vip:boolean', 'plan', 'consent_ad_user_data']);

  it('types traits by their header and leaves empty cells unnamed', () => {
    expect(csvRecordToPerson(layout, ['c-1', 'a@example.org', '12.5', 'true', '', 'granted'])).toEqual({
      person: {
        external_id: 'c-1',
        identifiers: { email: 'a@example.org' },
        traits: { ltv: 12.5, vip: true },
        consent: { ad_user_data: 'granted' },
      },
    });
  });

  it('rejects a bad typed trait and a row of the wrong width', () => {
    expect(csvRecordToPerson(layout, ['c-1', '', 'x', 'yes', '', ''])).toEqual({
      errors: { 'traits.ltv': ['invalid_trait_value'], 'traits.vip': ['invalid_trait_value'] },
    });
    expect(csvRecordToPerson(layout, ['c-1'])).toEqual({ errors: { non_field_errors: ['wrong_column_count'] } });
  });
});

describe('import row', () => {
  it('stages hashes and the clear columns only, with the batch rules', () => {
    const row = readImportRow(2, {
      identifiers: { email: ' A.B+x@Gmail.com ', phone: '+1 415 555 0100', country_code: 'us' },
      traits: { plan: 'gold', old: null },
    });
    expect(isRejected(row)).toBe(false);
    const staged = row as StagedRow;
    expect(staged.externalId).toBe(`email:${sha256('ab@gmail.com').slice(0, 32)}`);
    expect(staged).toMatchObject({ line: 2, traits: { plan: 'gold' }, removedTraits: ['old'], countryCode: 'US', consentAdUserData: null });
    const hashes = (['google', 'meta'] as const).flatMap((platform) =>
      [...eachIdentifier(platform === 'google' ? staged.googleIdentifiers : staged.metaIdentifiers)].map(({ kind, hash }) => [
        `${platform}:${kind}`,
        hash.toString('hex'),
      ]),
    );
    expect(hashes).toEqual(
      expect.arrayContaining([
        ['google:email', sha256('ab@gmail.com')],
        ['meta:email', sha256('a.b+x@gmail.com')],
        ['google:phone', sha256('+14155550100')],
        ['meta:phone', sha256('14155550100')],
        ['meta:country', sha256('us')],
      ]),
    );
    expect(staged.matchedKeys).toEqual(['email', 'phone']);
    expect(JSON.stringify(staged)).not.toContain('Gmail');
  });

  it('rejects what a batch row rejects, with the same codes', () => {
    expect(readImportRow(3, { external_id: 'x', identifiers: { email: 'nope' } })).toEqual({
      line: 3,
      errors: { 'identifiers.email': ['invalid_email'] },
    });
    expect(readImportRow(4, { traits: { plan: 'gold' } })).toEqual({ line: 4, errors: { external_id: ['missing_external_id'] } });
  });
});
