import { hash } from 'node:crypto';
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/min';

/**
 * The normal form of each identifier, one value at a time (SPEC 10.1). Every function takes text
 * the caller has already trimmed and found non-blank, and returns undefined when the value is
 * invalid. identifier-normalization.ts turns a whole row into per-platform hashes and row errors;
 * the sources these rules follow are cited there.
 *
 * Hot path: this runs on every row of million-row imports. No regular expression here can
 * backtrack (each is a single character class or an anchored fixed-length pattern, so its cost is
 * linear in the input); the rest is native string calls and single passes.
 */

/** SHA-256 of the UTF-8 bytes: 32 bytes, stored as `bytea` and sent as lowercase hex. */
export function sha256(text: string): Buffer {
  // One native call (Node ≥ 20.12) instead of createHash().update().digest(): no Hash object per value.
  return hash('sha256', text, 'buffer');
}

export interface EmailForms {
  /** Trimmed and lowercased: Meta's form, and Google's for every domain but Gmail's. */
  meta: string;
  /** For gmail.com and googlemail.com, the local part without dots or `+tag`. */
  google: string;
}

const DOT = 0x2e;

export function emailForms(trimmed: string): EmailForms | undefined {
  const email = trimmed.toLowerCase();
  const at = email.indexOf('@');
  if (at <= 0 || email.indexOf('@', at + 1) !== -1) return undefined;
  // A domain with a dot that neither starts nor ends it: `a@b.c`, not `a@.c` or `a@b.`.
  const last = email.length - 1;
  if (at === last || email.charCodeAt(at + 1) === DOT || email.charCodeAt(last) === DOT || email.indexOf('.', at + 2) === -1) {
    return undefined;
  }
  if (!email.endsWith('@gmail.com') && !email.endsWith('@googlemail.com')) return { meta: email, google: email };
  const plus = email.indexOf('+');
  const local = (plus !== -1 && plus < at ? email.slice(0, plus) : email.slice(0, at)).replaceAll('.', '');
  // `.@gmail.com` or `+tag@gmail.com` has no Google form: nobody's address is `@gmail.com`.
  if (local === '') return undefined;
  return { meta: email, google: local + email.slice(at) };
}

const NON_DIGITS = /[^0-9]/g;
const PLUS = 0x2b;
const ZERO = 0x30;
/** More digits than any national number with its trunk or international prefix: rejected unparsed. */
const MAX_DIGITS = 17;

/**
 * E.164 digits without the `+` (Meta's form; Google's is `+` and these). Only a number without `+`
 * in a row with a country code goes through libphonenumber-js: parsing costs about four times an
 * email (DATAPLANE-FACTS), and an international number needs none.
 */
export function phoneDigits(trimmed: string, countryCode: string | undefined): string | undefined {
  const international = trimmed.charCodeAt(0) === PLUS;
  let digits = trimmed.replace(NON_DIGITS, '');
  if (digits.length === 0 || digits.length > MAX_DIGITS) return undefined;
  if (!international && countryCode !== undefined && isSupportedCountry(countryCode)) {
    // Digits only: the library's own input cleaning is not needed, and what it gets is short.
    const parsed = parsePhoneNumberFromString(digits, countryCode as CountryCode);
    if (parsed === undefined) return undefined;
    digits = parsed.number.slice(1);
  }
  // No E.164 country code starts with 0: `0044…` without `+` or country is not a number we can read.
  if (digits.length < 8 || digits.length > 15 || digits.charCodeAt(0) === ZERO) return undefined;
  return digits;
}

export interface NameForms {
  /** Lowercased, NFC. */
  google: string;
  /** Also without punctuation; undefined when nothing else is left. */
  meta: string | undefined;
}

const PUNCTUATION = /\p{P}/gu;

export function nameForms(trimmed: string): NameForms {
  // Lowercase first: NFC of the lowercased text is what both platforms compare, and NFC after the
  // case change also composes anything toLowerCase decomposed.
  const google = trimmed.toLowerCase().normalize('NFC');
  const meta = google.replace(PUNCTUATION, '').trim();
  return { google, meta: meta === '' ? undefined : meta };
}

export interface PostalCodeForms {
  /** Trimmed, as given: Google takes it unhashed, and it is stored in clear. */
  clear: string;
  /** Lowercase, no whitespace or dashes, a US ZIP+4 cut to its 5 digits: hashed for Meta. */
  meta: string;
}

const POSTAL_SEPARATORS = /[\s-]/g;
/** Longer than any national format (the longest are 10 characters): junk, not an address. */
const MAX_POSTAL_CODE_LENGTH = 16;

export function postalCodeForms(trimmed: string, countryCode: string | undefined): PostalCodeForms | undefined {
  if (trimmed.length > MAX_POSTAL_CODE_LENGTH) return undefined;
  let meta = trimmed.toLowerCase().replace(POSTAL_SEPARATORS, '');
  if (meta === '') return undefined;
  if (countryCode === 'US' && meta.length > 5 && startsWithDigits(meta, 5)) meta = meta.slice(0, 5);
  return { clear: trimmed, meta };
}

function startsWithDigits(text: string, count: number): boolean {
  for (let index = 0; index < count; index++) {
    const code = text.charCodeAt(index);
    if (code < ZERO || code > ZERO + 9) return false;
  }
  return true;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** What iOS reports when the user limits ad tracking: shared by millions, it identifies no one. */
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** A lowercase UUID (Meta's MADID, sent unhashed), or undefined. */
export function mobileAdIdForm(trimmed: string): string | undefined {
  const id = trimmed.toLowerCase();
  return UUID.test(id) && id !== ZERO_UUID ? id : undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A pre-hashed value as bytes. Exactly 64 lowercase hex characters and never normalised again: an
 * uppercase or padded value is refused rather than fixed, because a caller who sends one has
 * likely hashed something other than the normal form (DATAPLANE-FACTS, "Pitfalls").
 */
export function sha256FromHex(value: string): Buffer | undefined {
  return SHA256_HEX.test(value) ? Buffer.from(value, 'hex') : undefined;
}
