import { isAssignedCountryCode } from './country-codes.js';
import { emailForms, mobileAdIdForm, nameForms, phoneDigits, postalCodeForms, sha256, sha256FromHex } from './identifier-forms.js';

/**
 * One person's `identifiers` (SPEC 10.1) → what each platform takes, plus the row's errors. Raw
 * values live only inside this call: what leaves it is hashes, and the country and postal code in
 * clear (SPEC 10, "Privacy by construction"). Nothing here logs, and no error carries a value.
 *
 * Sources (read through stored copies of the pages, 2026-11):
 * - Google Data Manager API, "Format user data"
 *   (developers.google.com/data-manager/api/devguides/concepts/formatting): email lowercased;
 *   for gmail.com and googlemail.com every `.` and the `+` with all that follows removed from the
 *   local part (`cloudy.sanfrancisco+shopping@gmail.com` → `cloudysanfrancisco@gmail.com`;
 *   `user.name+NYC@Example.com` → `user.name+nyc@example.com` elsewhere); phone E.164 with `+` and
 *   country code (US `(800)555-0100` → `+18005550100`); SHA-256, hex or Base64. AddressInfo
 *   (…/data-manager/api/reference/rest/v1/UserData): given and family name lowercase and hashed,
 *   region code ISO 3166-1 alpha-2 and postal code unhashed, all four required together.
 * - Meta: the custom audience API page (developers.facebook.com/docs/marketing-api/custom-audience-api,
 *   "hashing and normalizing data") and the Conversions API customer information parameters
 *   (developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters).
 *   The stored copies showed only the pages' introductions; the field rules below are those
 *   DATAPLANE-FACTS.md gathered from them: email trimmed and lowercased, no Gmail rule; phone digits
 *   only with the country code, no `+`; names lowercase without punctuation, UTF-8; country
 *   lowercase alpha-2; ZIP without spaces or dashes; MADID unhashed. The spec files test the
 *   page's examples (John_Smith@gmail.com, 16505551212, mary, smith, us) against hashes computed
 *   apart from this code.
 * Where the sources and SPEC 10.1 differ, SPEC decides: email is trimmed, not stripped of inner
 * whitespace (Google says strip it), and Google's names keep their punctuation (AddressInfo says
 * without).
 *
 * Error codes, under `identifiers.<field>` (and `identifiers.<field>.<index>` for an array element):
 * - `invalid_email`: not a string, or not one `@` with a local part and a dotted domain.
 * - `invalid_phone`: not a string, or not 8–15 digits of E.164 once read.
 * - `invalid_name`: `first_name` or `last_name` not a string.
 * - `invalid_country_code`: not an assigned ISO 3166-1 alpha-2 code.
 * - `invalid_postal_code`: not a string, longer than 16 characters, or only spaces and dashes.
 * - `invalid_mobile_ad_id`: not a UUID, or the all-zero UUID of a limited-tracking device.
 * - `invalid_sha256`: `email_sha256` / `phone_sha256` not exactly 64 lowercase hex characters.
 * - `too_many_values`: an array of more than 5 for `email`, `phone`, `email_sha256`, `phone_sha256`.
 * - `unknown_identifier`: a key that is none of the above fields.
 * - `invalid_identifiers` (under `identifiers`): the value is not an object.
 *
 * A blank string (empty or whitespace) or `null` counts as absent, not as an error: an import's
 * empty CSV cell means "no value".
 */

export type MatchedKey = 'email' | 'phone' | 'address' | 'mobile_ad_id';

/** Field path → error codes, in the shape of a batch's `rejected[].errors` (SPEC 10.1). */
export type IdentifierErrors = Record<string, string[]>;

export interface GoogleIdentifiers {
  /** SHA-256 of each email's Google form (Gmail without dots and `+tag`), then `email_sha256` values. */
  emails: Buffer[];
  /** SHA-256 of `+` and the E.164 digits, then `phone_sha256` values. */
  phones: Buffer[];
  firstName?: Buffer;
  lastName?: Buffer;
  /** Unhashed, uppercase: AddressInfo.regionCode. */
  countryCode?: string;
  /** Unhashed, trimmed: AddressInfo.postalCode. */
  postalCode?: string;
}

export interface MetaIdentifiers {
  /** SHA-256 of each trimmed, lowercased email, then `email_sha256` values. */
  emails: Buffer[];
  /** SHA-256 of the E.164 digits without `+`. `phone_sha256` is Google's form, so never here. */
  phones: Buffer[];
  firstName?: Buffer;
  lastName?: Buffer;
  /** SHA-256 of the lowercase country code. */
  country?: Buffer;
  /** SHA-256 of the lowercase postal code without spaces or dashes (US: 5 digits). */
  zip?: Buffer;
  /** Lowercase UUID, unhashed. */
  madid?: string;
}

export interface NormalizedIdentifiers {
  google: GoogleIdentifiers;
  meta: MetaIdentifiers;
  /** Stored in clear: uppercase ISO 3166-1 alpha-2. */
  countryCode?: string;
  /** Stored in clear: trimmed. */
  postalCode?: string;
  /** Lowercase UUID. */
  mobileAdId?: string;
  /** Which kinds of key this row carries, in this order: email, phone, address, mobile_ad_id. */
  matchedKeys: MatchedKey[];
  /** Empty when the row is valid; a row with any error is to be rejected whole. */
  errors: IdentifierErrors;
}

export interface NormalizationOptions {
  /**
   * The person's stored country code (uppercase), for a write that names a phone or postal code but
   * no `country_code`: a national number and a US ZIP+4 are read in the country the person has.
   */
  storedCountryCode?: string;
}

export const MAX_VALUES_PER_IDENTIFIER = 5;

const FIELDS = new Set([
  'email',
  'phone',
  'first_name',
  'last_name',
  'country_code',
  'postal_code',
  'mobile_ad_id',
  'email_sha256',
  'phone_sha256',
]);

const EMAIL: FieldRule = { path: 'identifiers.email', invalid: 'invalid_email' };
const PHONE: FieldRule = { path: 'identifiers.phone', invalid: 'invalid_phone' };
const EMAIL_SHA256: FieldRule = { path: 'identifiers.email_sha256', invalid: 'invalid_sha256', untrimmed: true };
const PHONE_SHA256: FieldRule = { path: 'identifiers.phone_sha256', invalid: 'invalid_sha256', untrimmed: true };

export function normalizeIdentifiers(identifiers: unknown, options: NormalizationOptions = {}): NormalizedIdentifiers {
  const google: GoogleIdentifiers = { emails: [], phones: [] };
  const meta: MetaIdentifiers = { emails: [], phones: [] };
  const result: NormalizedIdentifiers = { google, meta, matchedKeys: [], errors: {} };
  if (typeof identifiers !== 'object' || identifiers === null || Array.isArray(identifiers)) {
    result.errors.identifiers = ['invalid_identifiers'];
    return result;
  }
  const input = identifiers as Record<string, unknown>;
  const errors = result.errors;
  for (const key of Object.keys(input)) {
    if (!FIELDS.has(key)) addError(errors, `identifiers.${key}`, 'unknown_identifier');
  }

  // The country first: the phone and postal code are read in it.
  const countryText = singleText(input.country_code, 'identifiers.country_code', 'invalid_country_code', errors);
  if (countryText !== undefined) {
    const code = countryText.toUpperCase();
    if (isAssignedCountryCode(code)) {
      result.countryCode = code;
      google.countryCode = code;
      meta.country = sha256(code.toLowerCase());
    } else {
      addError(errors, 'identifiers.country_code', 'invalid_country_code');
    }
  }
  const country = result.countryCode ?? options.storedCountryCode;

  eachText(input.email, EMAIL, errors, (text, path) => {
    const forms = emailForms(text);
    if (forms === undefined) return addError(errors, path, 'invalid_email');
    const metaHash = sha256(forms.meta);
    pushUnique(meta.emails, metaHash);
    pushUnique(google.emails, forms.google === forms.meta ? metaHash : sha256(forms.google));
  });
  eachText(input.phone, PHONE, errors, (text, path) => {
    const digits = phoneDigits(text, country);
    if (digits === undefined) return addError(errors, path, 'invalid_phone');
    pushUnique(meta.phones, sha256(digits));
    pushUnique(google.phones, sha256(`+${digits}`));
  });
  eachText(input.email_sha256, EMAIL_SHA256, errors, (text, path) => {
    const bytes = sha256FromHex(text);
    if (bytes === undefined) return addError(errors, path, 'invalid_sha256');
    pushUnique(google.emails, bytes);
    pushUnique(meta.emails, bytes);
  });
  eachText(input.phone_sha256, PHONE_SHA256, errors, (text, path) => {
    const bytes = sha256FromHex(text);
    if (bytes === undefined) return addError(errors, path, 'invalid_sha256');
    pushUnique(google.phones, bytes);
  });

  const firstName = singleText(input.first_name, 'identifiers.first_name', 'invalid_name', errors);
  if (firstName !== undefined) {
    const forms = nameForms(firstName);
    google.firstName = sha256(forms.google);
    if (forms.meta !== undefined) meta.firstName = forms.meta === forms.google ? google.firstName : sha256(forms.meta);
  }
  const lastName = singleText(input.last_name, 'identifiers.last_name', 'invalid_name', errors);
  if (lastName !== undefined) {
    const forms = nameForms(lastName);
    google.lastName = sha256(forms.google);
    if (forms.meta !== undefined) meta.lastName = forms.meta === forms.google ? google.lastName : sha256(forms.meta);
  }

  const postalText = singleText(input.postal_code, 'identifiers.postal_code', 'invalid_postal_code', errors);
  if (postalText !== undefined) {
    const forms = postalCodeForms(postalText, country);
    if (forms === undefined) {
      addError(errors, 'identifiers.postal_code', 'invalid_postal_code');
    } else {
      result.postalCode = forms.clear;
      google.postalCode = forms.clear;
      meta.zip = sha256(forms.meta);
    }
  }

  const adIdText = singleText(input.mobile_ad_id, 'identifiers.mobile_ad_id', 'invalid_mobile_ad_id', errors);
  if (adIdText !== undefined) {
    const id = mobileAdIdForm(adIdText);
    if (id === undefined) {
      addError(errors, 'identifiers.mobile_ad_id', 'invalid_mobile_ad_id');
    } else {
      result.mobileAdId = id;
      meta.madid = id;
    }
  }

  result.matchedKeys = matchedKeysOf({
    email: google.emails.length > 0,
    phone: google.phones.length > 0,
    firstName: google.firstName !== undefined,
    lastName: google.lastName !== undefined,
    countryCode: result.countryCode !== undefined,
    postalCode: result.postalCode !== undefined,
    mobileAdId: result.mobileAdId !== undefined,
  });
  return result;
}

export interface PresentKeys {
  email: boolean;
  phone: boolean;
  firstName: boolean;
  lastName: boolean;
  countryCode: boolean;
  postalCode: boolean;
  mobileAdId: boolean;
}

/**
 * SPEC 10.1 `matched_keys`. Exported on its own because a write replaces only the identifiers it
 * names: a person's keys are those of the stored row after the write, not of the write alone.
 */
export function matchedKeysOf(present: PresentKeys): MatchedKey[] {
  const keys: MatchedKey[] = [];
  if (present.email) keys.push('email');
  if (present.phone) keys.push('phone');
  // Google matches an address only as all four parts together (AddressInfo requires each).
  if (present.firstName && present.lastName && present.countryCode && present.postalCode) keys.push('address');
  if (present.mobileAdId) keys.push('mobile_ad_id');
  return keys;
}

function addError(errors: IdentifierErrors, path: string, code: string): void {
  const codes = errors[path];
  if (codes === undefined) errors[path] = [code];
  else if (!codes.includes(code)) codes.push(code);
}

/** The trimmed text of a single-valued field; undefined when absent, blank, or not a string (an error). */
function singleText(value: unknown, path: string, invalid: string, errors: IdentifierErrors): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    addError(errors, path, invalid);
    return undefined;
  }
  const text = value.trim();
  return text === '' ? undefined : text;
}

interface FieldRule {
  path: string;
  invalid: string;
  /** Pre-hashed values are never normalised, not even trimmed: padding is an error, not a blank. */
  untrimmed?: boolean;
}

/** Calls `visit` with each non-blank value of a string-or-array field (trimmed unless said), and its error path. */
function eachText(value: unknown, rule: FieldRule, errors: IdentifierErrors, visit: (text: string, path: string) => void): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'string') {
    visitOne(value, rule, rule.path, visit);
    return;
  }
  if (!Array.isArray(value)) {
    addError(errors, rule.path, rule.invalid);
    return;
  }
  if (value.length > MAX_VALUES_PER_IDENTIFIER) {
    addError(errors, rule.path, 'too_many_values');
    return;
  }
  for (let index = 0; index < value.length; index++) {
    const element: unknown = value[index];
    const path = `${rule.path}.${index}`;
    if (typeof element === 'string') visitOne(element, rule, path, visit);
    else if (element !== null) addError(errors, path, rule.invalid);
  }
}

function visitOne(value: string, rule: FieldRule, path: string, visit: (text: string, path: string) => void): void {
  const text = value.trim();
  if (text !== '') visit(rule.untrimmed ? value : text, path);
}

/** Two spellings of one address (Gmail dots, a repeated value) are one identifier, sent once. */
function pushUnique(list: Buffer[], bytes: Buffer): void {
  for (const existing of list) if (existing.equals(bytes)) return;
  list.push(bytes);
}
