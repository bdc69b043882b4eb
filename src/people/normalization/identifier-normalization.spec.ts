import fc from 'fast-check';
import { matchedKeysOf, normalizeIdentifiers } from './identifier-normalization.js';

/** Expected hashes computed apart from this code (`printf '%s' … | sha256sum`). */
const HASH = {
  testExample: '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b',
  cloudyGoogle: '223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4',
  cloudyMeta: '8dd4a9bf850242873c14976125edabc35096192b784626a5641a7d2de56e3c1e',
  plus15551234567: '8a59780bb8cd2ba022bfa5ba2ea3b6e07af17a7d8b30c1f9b3390e36f69019e4',
  digits15551234567: 'd6736136ea896c1bfdc553e0e86e702c70d060d805696ca3e4e9e0961353860a',
  plus442079460958: 'f0bf0228144d9fe2bdf1da2d8ca698f17bf1410ee688b075c27062e47b6f0b6d',
  digits442079460958: '35e206e5dec4c89b9e8b71b8c32724a5bb518483ac5a20c6617d738375b3b823',
  mary: '6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec',
  maryAnnHyphen: 'ed4bdd3a7368920a4d1f4e692201f7a4aee19278a930c824649af01bbc38c63f',
  maryannMeta: '16b3f07f0ec2f9dd127b71dc2e6c791b7d93116a1c3bc99d057eaa7a8a077e73',
  smith: '6627835f988e2c5e50533d491163072d3f4f41f5c8b04630150debb3722ca2dd',
  us: '79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621',
  gb: '0b407281768f0e833afef47ed464b6571d01ca4d53c12ce5c51d1462f4ad6677',
  zip94035: '1794327a4d443904421f5ca1f3d72d0a62ba2f0770d80755ec2220fc0efb052e',
};

const hexes = (list: Buffer[]): string[] => list.map((bytes) => bytes.toString('hex'));
const hex = (bytes: Buffer | undefined): string | undefined => bytes?.toString('hex');

describe('normalizeIdentifiers', () => {
  it('gives each platform its own email form and hash', () => {
    const result = normalizeIdentifiers({ email: '  Cloudy.SanFrancisco+shopping@gmail.com ' });
    expect(result.errors).toEqual({});
    expect(hexes(result.google.emails)).toEqual([HASH.cloudyGoogle]);
    expect(hexes(result.meta.emails)).toEqual([HASH.cloudyMeta]);
    expect(result.matchedKeys).toEqual(['email']);
  });

  it('gives Google +E.164 and Meta the digits, reading a national number in the row country', () => {
    const result = normalizeIdentifiers({ phone: '020 7946 0958', country_code: 'gb' });
    expect(result.errors).toEqual({});
    expect(hexes(result.google.phones)).toEqual([HASH.plus442079460958]);
    expect(hexes(result.meta.phones)).toEqual([HASH.digits442079460958]);
    expect(result.countryCode).toBe('GB');
    expect(result.google.countryCode).toBe('GB');
    expect(hex(result.meta.country)).toBe(HASH.gb);
    expect(result.matchedKeys).toEqual(['phone']);
  });

  it('reads a national number in the stored country when the write names none', () => {
    const result = normalizeIdentifiers({ phone: '(555) 123-4567' }, { storedCountryCode: 'US' });
    expect(hexes(result.google.phones)).toEqual([HASH.plus15551234567]);
    expect(hexes(result.meta.phones)).toEqual([HASH.digits15551234567]);
    expect(result.countryCode).toBeUndefined();
  });

  it('builds an address from all four parts, the country and postal code in clear for Google', () => {
    const result = normalizeIdentifiers({
      first_name: ' Mary-Ann ',
      last_name: 'SMITH',
      country_code: 'US',
      postal_code: ' 94035-1234 ',
    });
    expect(result.errors).toEqual({});
    expect(hex(result.google.firstName)).toBe(HASH.maryAnnHyphen);
    expect(hex(result.meta.firstName)).toBe(HASH.maryannMeta);
    expect(hex(result.google.lastName)).toBe(HASH.smith);
    expect(hex(result.meta.lastName)).toBe(HASH.smith);
    expect(result.google.postalCode).toBe('94035-1234');
    expect(result.postalCode).toBe('94035-1234');
    expect(hex(result.meta.zip)).toBe(HASH.zip94035);
    expect(hex(result.meta.country)).toBe(HASH.us);
    expect(result.matchedKeys).toEqual(['address']);
  });

  it('counts no address when a part is missing', () => {
    const result = normalizeIdentifiers({ first_name: 'Mary', last_name: 'Smith', country_code: 'US' });
    expect(hex(result.google.firstName)).toBe(HASH.mary);
    expect(result.matchedKeys).toEqual([]);
  });

  it('sends a mobile ad id to Meta only, lowercased and unhashed', () => {
    const result = normalizeIdentifiers({ mobile_ad_id: 'AECE52E7-03EE-455A-B3C4-E57283966239' });
    expect(result.meta.madid).toBe('aece52e7-03ee-455a-b3c4-e57283966239');
    expect(result.mobileAdId).toBe('aece52e7-03ee-455a-b3c4-e57283966239');
    expect(result.google).toEqual({ emails: [], phones: [] });
    expect(result.matchedKeys).toEqual(['mobile_ad_id']);
  });

  it('sends a pre-hashed email to both platforms as given, and a pre-hashed phone to Google only', () => {
    const result = normalizeIdentifiers({ email_sha256: HASH.testExample, phone_sha256: HASH.plus15551234567 });
    expect(result.errors).toEqual({});
    expect(hexes(result.google.emails)).toEqual([HASH.testExample]);
    expect(hexes(result.meta.emails)).toEqual([HASH.testExample]);
    expect(hexes(result.google.phones)).toEqual([HASH.plus15551234567]);
    expect(result.meta.phones).toEqual([]);
    expect(result.matchedKeys).toEqual(['email', 'phone']);
  });

  it('refuses pre-hashed uppercase or padded hex instead of normalising it', () => {
    const result = normalizeIdentifiers({ email_sha256: HASH.testExample.toUpperCase(), phone_sha256: ` ${HASH.testExample}` });
    expect(result.errors).toEqual({
      'identifiers.email_sha256': ['invalid_sha256'],
      'identifiers.phone_sha256': ['invalid_sha256'],
    });
    expect(result.google.emails).toEqual([]);
  });

  it('takes arrays of up to 5, merging spellings of one address', () => {
    const result = normalizeIdentifiers({
      email: ['test@example.com', 'TEST@example.com', 'cloudysanfrancisco@gmail.com', 'cloudy.sanfrancisco+shopping@gmail.com', ''],
      phone: ['+1 555 123 4567', '15551234567'],
    });
    expect(result.errors).toEqual({});
    expect(hexes(result.google.emails)).toEqual([HASH.testExample, HASH.cloudyGoogle]);
    expect(hexes(result.meta.emails)).toHaveLength(3);
    expect(hexes(result.google.phones)).toEqual([HASH.plus15551234567]);
  });

  it('refuses an array of 6 as too_many_values', () => {
    const six = Array.from({ length: 6 }, (_, index) => `person${index}@example.com`);
    const result = normalizeIdentifiers({ email: six, phone: Array.from({ length: 6 }, () => '+15551234567') });
    expect(result.errors).toEqual({ 'identifiers.email': ['too_many_values'], 'identifiers.phone': ['too_many_values'] });
    expect(result.google.emails).toEqual([]);
  });

  it('keys an error by field, and by index inside an array, never echoing the value', () => {
    const result = normalizeIdentifiers({ email: ['test@example.com', 'not-an-email', 42], phone: '12' });
    expect(result.errors).toEqual({
      'identifiers.email.1': ['invalid_email'],
      'identifiers.email.2': ['invalid_email'],
      'identifiers.phone': ['invalid_phone'],
    });
    expect(JSON.stringify(result.errors)).not.toContain('not-an-email');
  });

  it('reports each invalid field with its own code', () => {
    const result = normalizeIdentifiers({
      email: 'a@b',
      country_code: 'UK',
      postal_code: 12345,
      first_name: ['Mary'],
      mobile_ad_id: 'not-a-uuid',
      nickname: 'x',
    });
    expect(result.errors).toEqual({
      'identifiers.email': ['invalid_email'],
      'identifiers.country_code': ['invalid_country_code'],
      'identifiers.postal_code': ['invalid_postal_code'],
      'identifiers.first_name': ['invalid_name'],
      'identifiers.mobile_ad_id': ['invalid_mobile_ad_id'],
      'identifiers.nickname': ['unknown_identifier'],
    });
  });

  it('treats blank strings and null as absent', () => {
    const result = normalizeIdentifiers({ email: '  ', phone: null, first_name: '', country_code: ' ', postal_code: '' });
    expect(result.errors).toEqual({});
    expect(result.matchedKeys).toEqual([]);
  });

  it('refuses identifiers that are not an object', () => {
    for (const bad of [null, 'test@example.com', ['test@example.com'], 7]) {
      expect(normalizeIdentifiers(bad).errors).toEqual({ identifiers: ['invalid_identifiers'] });
    }
  });
});

describe('matchedKeysOf', () => {
  it('lists the kinds of key in a fixed order, address only with all four parts', () => {
    const none = {
      email: false,
      phone: false,
      firstName: false,
      lastName: false,
      countryCode: false,
      postalCode: false,
      mobileAdId: false,
    };
    expect(matchedKeysOf({ ...none, mobileAdId: true, email: true })).toEqual(['email', 'mobile_ad_id']);
    expect(matchedKeysOf({ ...none, firstName: true, lastName: true, countryCode: true })).toEqual([]);
    expect(matchedKeysOf({ ...none, firstName: true, lastName: true, countryCode: true, postalCode: true })).toEqual(['address']);
  });
});

describe('normalizeIdentifiers on arbitrary input', () => {
  // Imports feed it whatever a file holds: it must answer with errors, never throw, and never put
  // a submitted value into an error.
  const field = fc.constantFrom(
    'email',
    'phone',
    'first_name',
    'last_name',
    'country_code',
    'postal_code',
    'mobile_ad_id',
    'email_sha256',
    'phone_sha256',
    'other',
  );
  const value = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.array(fc.string(), { maxLength: 7 }), fc.jsonValue());

  it('never throws, hashes only to 32 bytes, and keys errors by path alone', () => {
    fc.assert(
      fc.property(fc.dictionary(field, value), (identifiers) => {
        const result = normalizeIdentifiers(identifiers);
        const { google, meta } = result;
        for (const bytes of [...google.emails, ...google.phones, ...meta.emails, ...meta.phones]) expect(bytes).toHaveLength(32);
        for (const [path, codes] of Object.entries(result.errors)) {
          expect(path).toMatch(/^identifiers(\.[a-z_0-9]+)*$/);
          for (const code of codes) expect(code).toMatch(/^[a-z_0-9]+$/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
