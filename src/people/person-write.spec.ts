import { createHash } from 'node:crypto';
import { eachIdentifier, packIdentifiers } from './person-identifiers.js';
import { hashesOf, mergedColumns, normalizeWith, readPersonWrite, type StoredPerson } from './person-write.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const stored = (overrides: Partial<StoredPerson> = {}): StoredPerson => ({
  id: 7,
  externalId: 'crm-7',
  traits: { plan: 'free', keep: 1 },
  consentAdUserData: 'granted',
  consentAdPersonalization: 'unspecified',
  countryCode: null,
  postalCode: null,
  mobileAdId: null,
  googleIdentifiers: Buffer.alloc(0),
  metaIdentifiers: Buffer.alloc(0),
  ...overrides,
});

describe('readPersonWrite', () => {
  it('derives the external_id from the Google email hash when none is given', () => {
    const write = readPersonWrite({ identifiers: { email: 'A.B+x@gmail.com' } });
    expect(write.errors).toEqual({});
    expect(write.externalId).toBe(`email:${sha256('ab@gmail.com').slice(0, 32)}`);
    expect(write.externalIdDerived).toBe(true);
    expect(readPersonWrite({ external_id: 'crm-7', identifiers: { email: 'a@example.com' } }).externalIdDerived).toBe(false);
  });

  it('rejects a row with no external_id and no email or phone', () => {
    expect(readPersonWrite({ traits: { a: 1 } }).errors).toEqual({ external_id: ['missing_external_id'] });
  });

  it('ignores read-only fields and names unknown ones', () => {
    expect(readPersonWrite({ external_id: 'x', id: 1, matched_keys: [], nickname: 'n' }).errors).toEqual({ nickname: ['unknown_field'] });
  });

  it('checks traits: key pattern, value types, string length, count', () => {
    expect(readPersonWrite({ external_id: 'x', traits: { 'a b': 1 } }).errors).toEqual({ traits: ['invalid_trait_key'] });
    expect(readPersonWrite({ external_id: 'x', traits: JSON.parse('{"__proto__": 1}') }).errors).toEqual({ traits: ['invalid_trait_key'] });
    expect(readPersonWrite({ external_id: 'x', traits: { a: [1], b: 'y'.repeat(1001), c: null, d: 1.5, e: true } }).errors).toEqual({
      'traits.a': ['invalid_trait_value'],
      'traits.b': ['invalid_trait_value'],
    });
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`k${index}`, index]));
    expect(readPersonWrite({ external_id: 'x', traits: many }).errors).toEqual({ traits: ['too_many_traits'] });
  });

  it('checks consent values and keys', () => {
    expect(readPersonWrite({ external_id: 'x', consent: { ad_user_data: 'yes', other: 'granted' } }).errors).toEqual({
      'consent.ad_user_data': ['invalid_consent'],
      consent: ['unknown_consent'],
    });
    // Names every object inherits are no consent fields.
    expect(readPersonWrite({ external_id: 'x', consent: { constructor: 'granted', toString: 'denied' } }).errors).toEqual({
      consent: ['unknown_consent', 'unknown_consent'],
    });
  });
});

describe('mergedColumns and hashesOf', () => {
  it('merges traits (null removes), keeps unnamed consent, and counts matched keys from the stored kinds it does not replace', () => {
    const write = readPersonWrite({ external_id: 'crm-7', traits: { plan: 'pro', keep: null }, identifiers: { phone: '+15551230000' } });
    const storedEmail = Buffer.from(sha256('a@example.com'), 'hex');
    const storedPhone = Buffer.from(sha256('+15550000000'), 'hex');
    const columns = mergedColumns(
      write,
      'crm-7',
      stored({
        googleIdentifiers: packIdentifiers([
          { kind: 'phone', hash: storedPhone },
          { kind: 'email', hash: storedEmail },
        ]),
      }),
    );
    expect(columns.traits).toEqual({ plan: 'pro' });
    expect(columns.consentAdUserData).toBe('granted');
    expect(columns.matchedKeys).toEqual(['email', 'phone']);
    // The stored phone is replaced (the write names phones), the stored email stays; sorted by kind name.
    expect([...eachIdentifier(columns.googleIdentifiers)].map(({ kind, hash }) => [kind, hash.toString('hex')])).toEqual([
      ['email', storedEmail.toString('hex')],
      ['phone', sha256('+15551230000')],
    ]);
    expect([...eachIdentifier(columns.metaIdentifiers)].map(({ kind }) => kind)).toEqual(['phone']);
    expect(hashesOf(write).map(({ platform, kind, hash }) => [platform, kind, hash.toString('hex')])).toEqual([
      ['google', 'phone', sha256('+15551230000')],
      ['meta', 'phone', sha256('15551230000')],
    ]);
  });

  it('reads a national phone in the stored country when the write names none', () => {
    const write = readPersonWrite({ external_id: 'crm-7', identifiers: { phone: '(415) 555-0100' } });
    normalizeWith(write, stored({ countryCode: 'US' }));
    expect(
      hashesOf(write)
        .find((hash) => hash.platform === 'google')
        ?.hash.toString('hex'),
    ).toBe(sha256('+14155550100'));
  });

  it('hashes the stored postal code again when the country changes (Meta cuts US codes to 5 digits)', () => {
    const write = readPersonWrite({ external_id: 'crm-7', identifiers: { country_code: 'us' } });
    normalizeWith(write, stored({ countryCode: 'CA', postalCode: '94043-1351' }));
    const zip = hashesOf(write).find((hash) => hash.kind === 'zip');
    expect(zip?.hash.toString('hex')).toBe(sha256('94043'));
    expect(mergedColumns(write, 'crm-7', stored({ countryCode: 'CA', postalCode: '94043-1351' }))).toMatchObject({
      countryCode: 'US',
      postalCode: '94043-1351',
    });
  });

  it('hashes the stored postal code again without a country when the write removes the country', () => {
    const person = stored({ countryCode: 'US', postalCode: '94043-1351' });
    const write = readPersonWrite({ external_id: 'crm-7', identifiers: { country_code: null } });
    normalizeWith(write, person);
    const zip = hashesOf(write).find((hash) => hash.kind === 'zip');
    expect(zip?.hash.toString('hex')).toBe(sha256('940431351'));
    expect(mergedColumns(write, 'crm-7', person)).toMatchObject({ countryCode: null, postalCode: '94043-1351' });
  });
});
