import { ASSIGNED_COUNTRY_CODE_COUNT, isAssignedCountryCode } from './country-codes.js';
import { emailForms, mobileAdIdForm, nameForms, phoneDigits, postalCodeForms, sha256, sha256FromHex } from './identifier-forms.js';

/**
 * One rule of SPEC 10.1 per test, on the examples Google's Data Manager API formatting guide and
 * Meta's customer information parameters publish. Every expected hash was computed apart from this
 * code (`printf '%s' … | sha256sum`), so a fault in sha256() cannot hide behind itself.
 */
const hex = (bytes: Buffer): string => bytes.toString('hex');

describe('sha256', () => {
  it('hashes the UTF-8 bytes into the 32 bytes stored as bytea', () => {
    const digest = sha256('test@example.com');
    expect(digest).toHaveLength(32);
    expect(hex(digest)).toBe('973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b');
  });

  it('hashes non-ASCII text as UTF-8', () => {
    expect(hex(sha256('valéry'))).toBe('08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c');
  });
});

describe('email forms', () => {
  it('trims and lowercases; other domains keep dots and +tags (Google: user.name+NYC@Example.com)', () => {
    expect(emailForms('user.name+NYC@Example.com')).toEqual({ meta: 'user.name+nyc@example.com', google: 'user.name+nyc@example.com' });
    expect(hex(sha256('user.name+nyc@example.com'))).toBe('f109a2a632fbcea5fc82049f50beed3d8621bf9034399f437fb622222acccdac');
  });

  it('removes every dot and the +tag from a gmail.com local part for Google only (Google: cloudy.sanfrancisco+shopping)', () => {
    const forms = emailForms('Cloudy.SanFrancisco+shopping@gmail.com')!;
    expect(forms.google).toBe('cloudysanfrancisco@gmail.com');
    expect(forms.meta).toBe('cloudy.sanfrancisco+shopping@gmail.com');
    expect(hex(sha256(forms.google))).toBe('223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4');
    expect(hex(sha256(forms.meta))).toBe('8dd4a9bf850242873c14976125edabc35096192b784626a5641a7d2de56e3c1e');
  });

  it('applies the Gmail rule to googlemail.com too', () => {
    const forms = emailForms('Jane.Doe+news@GoogleMail.com')!;
    expect(forms.google).toBe('janedoe@googlemail.com');
    expect(hex(sha256(forms.google))).toBe('338abf9ef1c8793cadc7bcf51ed595338eb727ed9e06ce3d91d566d60b975937');
    expect(hex(sha256(forms.meta))).toBe('fdad4ac86c5e2a527d32a992a0d0dc030b5eb70a55690ab4faf60c1b048d529c');
  });

  it('leaves look-alike domains alone', () => {
    expect(emailForms('a.b+c@notgmail.com')!.google).toBe('a.b+c@notgmail.com');
    expect(emailForms('a.b+c@gmail.com.au')!.google).toBe('a.b+c@gmail.com.au');
  });

  it("matches Meta's published example (John_Smith@gmail.com)", () => {
    const forms = emailForms('John_Smith@gmail.com')!;
    expect(forms.meta).toBe('john_smith@gmail.com');
    expect(hex(sha256(forms.meta))).toBe('62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f');
  });

  it('refuses anything but one @, a local part and a dotted domain', () => {
    for (const bad of [
      'plainaddress',
      '@example.com',
      'a@b@example.com',
      'a@example',
      'a@',
      'a@.com',
      'a@example.',
      '.@gmail.com',
      '+tag@gmail.com',
    ]) {
      expect(emailForms(bad)).toBeUndefined();
    }
  });
});

describe('phone digits', () => {
  it('keeps the digits of a number with + (Google: (800)555-0100 → +18005550100)', () => {
    const digits = phoneDigits('+1 (800) 555-0100', undefined)!;
    expect(digits).toBe('18005550100');
    expect(hex(sha256(`+${digits}`))).toBe('fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30');
    expect(hex(sha256(digits))).toBe('92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c');
  });

  it("reads a number without + and without a country as E.164 without its plus (Meta's 16505551212)", () => {
    const digits = phoneDigits('1-650-555-1212', undefined)!;
    expect(digits).toBe('16505551212');
    expect(hex(sha256(digits))).toBe('e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176');
    expect(hex(sha256(`+${digits}`))).toBe('1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8');
  });

  it("reads a national number in the row's country", () => {
    const digits = phoneDigits('020 7946 0958', 'GB')!;
    expect(digits).toBe('442079460958');
    expect(hex(sha256(`+${digits}`))).toBe('f0bf0228144d9fe2bdf1da2d8ca698f17bf1410ee688b075c27062e47b6f0b6d');
    expect(hex(sha256(digits))).toBe('35e206e5dec4c89b9e8b71b8c32724a5bb518483ac5a20c6617d738375b3b823');
    expect(phoneDigits('(555) 123-4567', 'US')).toBe('15551234567');
    expect(phoneDigits('00 44 20 7946 0958', 'GB')).toBe('442079460958');
  });

  it('does not re-read a number with + in the row country', () => {
    expect(phoneDigits('+44 20 7946 0958', 'US')).toBe('442079460958');
  });

  it('falls back to E.164 without plus in a country the phone library does not know', () => {
    expect(phoneDigits('16505551212', 'AQ')).toBe('16505551212');
  });

  it('refuses fewer than 8 or more than 15 digits, a leading 0, and text without digits', () => {
    for (const bad of ['+1234567', '+1234567890123456', '0044207946095', 'n/a', '+', '123', '1'.repeat(18)]) {
      expect(phoneDigits(bad, undefined)).toBeUndefined();
    }
    expect(phoneDigits('123', 'US')).toBeUndefined();
    expect(phoneDigits('+12345678', undefined)).toBe('12345678');
    expect(phoneDigits('+123456789012345', undefined)).toBe('123456789012345');
  });
});

describe('name forms', () => {
  it("lowercases for both platforms (Meta's mary)", () => {
    expect(nameForms('Mary')).toEqual({ google: 'mary', meta: 'mary' });
    expect(hex(sha256('mary'))).toBe('6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec');
  });

  it('composes accents to NFC before hashing, whichever way they came', () => {
    const decomposed = 'Vale\u0301ry';
    const forms = nameForms(decomposed);
    expect(forms.google).toBe('val\u00e9ry');
    expect(hex(sha256(forms.google))).toBe('08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c');
    expect(nameForms('JOSÉ').google).toBe('josé');
  });

  it('drops punctuation for Meta only', () => {
    const forms = nameForms("O'Brien-Smith");
    expect(forms.google).toBe("o'brien-smith");
    expect(forms.meta).toBe('obriensmith');
    expect(hex(sha256(forms.google))).toBe('5349291f7c643970cc1b897c8ffb45a8b630e59c1fecc3d1e4dc8e292a7971a9');
    expect(hex(sha256(forms.meta!))).toBe('16765783f9c8c8a3accf27f1abb877688cb5904c21a4a7afb5f125bcfcb246ba');
    expect(nameForms('Mary Ann').meta).toBe('mary ann');
  });

  it('has no Meta form when only punctuation is left', () => {
    expect(nameForms('-.').meta).toBeUndefined();
  });
});

describe('country codes', () => {
  it('knows the 249 assigned ISO 3166-1 alpha-2 codes and nothing else', () => {
    expect(ASSIGNED_COUNTRY_CODE_COUNT).toBe(249);
    for (const code of ['US', 'GB', 'FR', 'AQ', 'ZW']) expect(isAssignedCountryCode(code)).toBe(true);
    for (const code of ['UK', 'ZZ', 'XK', 'EU', 'us', 'USA']) expect(isAssignedCountryCode(code)).toBe(false);
  });

  it("hashes Meta's lowercase form (Meta's us)", () => {
    expect(hex(sha256('us'))).toBe('79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621');
  });
});

describe('postal code forms', () => {
  it('cuts a US ZIP+4 to its 5 digits for Meta and keeps it whole in clear', () => {
    const forms = postalCodeForms('94035-1234', 'US')!;
    expect(forms).toEqual({ clear: '94035-1234', meta: '94035' });
    expect(hex(sha256(forms.meta))).toBe('1794327a4d443904421f5ca1f3d72d0a62ba2f0770d80755ec2220fc0efb052e');
    expect(postalCodeForms('94035 1234', 'US')!.meta).toBe('94035');
  });

  it('lowercases without spaces or dashes elsewhere, and cuts nothing outside the US', () => {
    const forms = postalCodeForms('SW1A 1AA', 'GB')!;
    expect(forms).toEqual({ clear: 'SW1A 1AA', meta: 'sw1a1aa' });
    expect(hex(sha256(forms.meta))).toBe('830e1d4b9838bab1f5c2acdb23e0b502ff13a9832c4632e8d67a1d43d3b7f614');
    expect(postalCodeForms('01310-100', 'BR')!.meta).toBe('01310100');
    expect(postalCodeForms('94035-1234', undefined)!.meta).toBe('940351234');
  });

  it('refuses separators alone and overlong values', () => {
    expect(postalCodeForms('- -', 'US')).toBeUndefined();
    expect(postalCodeForms('1'.repeat(17), 'US')).toBeUndefined();
  });
});

describe('mobile ad id form', () => {
  it('lowercases a UUID and leaves it unhashed', () => {
    expect(mobileAdIdForm('AECE52E7-03EE-455A-B3C4-E57283966239')).toBe('aece52e7-03ee-455a-b3c4-e57283966239');
  });

  it('refuses other shapes and the all-zero id of limited ad tracking', () => {
    for (const bad of ['aece52e703ee455ab3c4e57283966239', 'aece52e7-03ee-455a-b3c4-e5728396623', 'zece52e7-03ee-455a-b3c4-e57283966239']) {
      expect(mobileAdIdForm(bad)).toBeUndefined();
    }
    expect(mobileAdIdForm('00000000-0000-0000-0000-000000000000')).toBeUndefined();
  });
});

describe('pre-hashed values', () => {
  it('takes 64 lowercase hex characters as the 32 bytes they spell', () => {
    const given = '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b';
    expect(hex(sha256FromHex(given)!)).toBe(given);
  });

  it('refuses uppercase hex, padding and other lengths instead of fixing them', () => {
    const given = '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b';
    for (const bad of [given.toUpperCase(), ` ${given}`, given.slice(1), `${given}0`, 'test@example.com']) {
      expect(sha256FromHex(bad)).toBeUndefined();
    }
  });
});
