import { deriveExternalId } from './external-id.js';
import { normalizeIdentifiers } from './identifier-normalization.js';

/** Expected hashes computed apart from this code (`printf '%s' … | sha256sum`). */
const HASH = {
  testExample: '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b',
  cloudyGoogle: '223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4',
  plus15551234567: '8a59780bb8cd2ba022bfa5ba2ea3b6e07af17a7d8b30c1f9b3390e36f69019e4',
};

describe('deriveExternalId', () => {
  it('is email: and the first 32 hex characters of the Google email hash', () => {
    const { google } = normalizeIdentifiers({ email: 'Cloudy.SanFrancisco+shopping@gmail.com', phone: '+15551234567' });
    expect(deriveExternalId(google)).toBe(`email:${HASH.cloudyGoogle.slice(0, 32)}`);
  });

  it('is the same for every spelling of one Gmail address', () => {
    const a = normalizeIdentifiers({ email: 'cloudysanfrancisco@gmail.com' }).google;
    const b = normalizeIdentifiers({ email: 'Cloudy.SanFrancisco+ads@gmail.com' }).google;
    expect(deriveExternalId(a)).toBe(`email:${HASH.cloudyGoogle.slice(0, 32)}`);
    expect(deriveExternalId(b)).toBe(deriveExternalId(a));
  });

  it('falls back to phone: and the Google phone hash', () => {
    const { google } = normalizeIdentifiers({ phone: '(555) 123-4567', country_code: 'US' });
    expect(deriveExternalId(google)).toBe(`phone:${HASH.plus15551234567.slice(0, 32)}`);
  });

  it('uses a pre-hashed email as given', () => {
    expect(deriveExternalId(normalizeIdentifiers({ email_sha256: HASH.testExample }).google)).toBe(
      `email:${HASH.testExample.slice(0, 32)}`,
    );
  });

  it('is undefined without an email or a phone', () => {
    expect(
      deriveExternalId(normalizeIdentifiers({ first_name: 'Mary', mobile_ad_id: 'aece52e7-03ee-455a-b3c4-e57283966239' }).google),
    ).toBeUndefined();
  });
});
