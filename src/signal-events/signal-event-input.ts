import { isIP } from 'node:net';
import type { Platform } from '../connections/connection.entity.js';
import { normalizeIdentifiers } from '../people/normalization/identifier-normalization.js';
import { packUserData, type UserDataTagName } from './packed-user-data.js';

/**
 * One event of `POST /api/v1/signals/{id}/events/` read into the row to store, or its errors
 * (SPEC 10.4). Identifiers go through the people's normalisation (SPEC 10.1) and leave this call
 * as hashes only; click ids, browser ids, IP address, user agent and page are kept as given,
 * because the platforms take them unhashed. Error codes, under the field's path:
 * - `required`, `unknown_field`, `invalid_event` (the event is not an object, under `event`);
 * - `invalid_event_id` (not a string of 1–255 characters);
 * - `invalid_event_time` (not ISO 8601 with a time zone), `event_time_too_old` (older than the
 *   platform takes: Meta 7 days, Google 90), `event_time_in_future` (more than 5 minutes ahead);
 * - `invalid_value` (not a number ≥ 0), `invalid_currency` (not an ISO 4217 code), `currency_required`
 *   (a value without its currency);
 * - `invalid_external_id`, `invalid_gclid`, `invalid_fbc`, `invalid_fbp`, `invalid_client_ip_address`,
 *   `invalid_client_user_agent`, `invalid_event_source_url`;
 * - the identifier codes of SPEC 10.1 (`invalid_email`, …) under `identifiers.<field>`;
 * - `no_match_key` (under `identifiers`): nothing the platform could match the event by;
 * - `required_for_website` (Meta, `action_source: website`): `client_user_agent` and `event_source_url`.
 */

export const MAX_EVENTS_PER_REQUEST = 1_000;

/** The row of one accepted event, as signal_events stores it. */
export interface SignalEventRow {
  eventId: string;
  eventTime: Date;
  value: number | null;
  currency: string | null;
  externalId: string | null;
  googleUserData: Buffer | null;
  metaUserData: Buffer | null;
  countryCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  gclid: string | null;
  fbc: string | null;
  fbp: string | null;
  clientIpAddress: string | null;
  clientUserAgent: string | null;
  eventSourceUrl: string | null;
}

export type EventErrors = Record<string, string[]>;

/** What the event's destination decides about it: the platform (when a connection is set) and Meta's action source. */
export interface EventRules {
  platform: Platform | null;
  metaActionSource: string | null;
  now: number;
}

const FIELDS = new Set([
  'event_id',
  'event_time',
  'value',
  'currency',
  'external_id',
  'identifiers',
  'gclid',
  'fbc',
  'fbp',
  'client_ip_address',
  'client_user_agent',
  'event_source_url',
]);

const DAY_MS = 86_400_000;
const FUTURE_TOLERANCE_MS = 5 * 60_000;
/**
 * An ISO 8601 instant in its extended form: date, time to the minute or finer (fractions up to
 * nanoseconds), and a zone: `Z`, `±hh`, `±hhmm` or `±hh:mm`; every field in its range but the day,
 * whose last value depends on the month (`readInstant`).
 */
const ISO_INSTANT =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?)$/;
const ZERO = 0x30;
const PLUS = 0x2b;
const MINUS = 0x2d;
/** The ISO 4217 codes the runtime's ICU knows (Node ships full ICU): the active currencies. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** How far back each platform takes an event; without a connection, the stricter one. */
export function maxEventAgeDays(platform: Platform | null): number {
  return platform === 'google_ads' ? 90 : 7;
}

/**
 * The instant `text` names, or null when it is not one. A day the month does not have (September
 * 31, February 29 of a common year) is refused: `Date.parse` would roll it over into the next
 * month, and the event would be delivered at a time nobody sent. Once per event, so the fields are
 * read in place rather than captured.
 */
export function readInstant(text: string): Date | null {
  if (!ISO_INSTANT.test(text)) return null;
  const day = twoDigits(text, 8);
  if (day > 28 && day > daysInMonth(twoDigits(text, 0) * 100 + twoDigits(text, 2), twoDigits(text, 5))) return null;
  // `Date.parse` reads `±hh:mm` and `±hhmm` but not ISO 8601's hour-only `±hh`.
  const sign = text.charCodeAt(text.length - 3);
  const time = Date.parse(sign === PLUS || sign === MINUS ? `${text}:00` : text);
  return Number.isNaN(time) ? null : new Date(time);
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - ZERO) * 10 + text.charCodeAt(at + 1) - ZERO;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function readSignalEvent(input: unknown, rules: EventRules): { row: SignalEventRow } | { errors: EventErrors } {
  const errors: EventErrors = {};
  const add = (path: string, code: string) => (errors[path] ??= []).push(code);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { errors: { event: ['invalid_event'] } };
  const event = input as Record<string, unknown>;
  for (const key of Object.keys(event)) if (!FIELDS.has(key)) add(key.slice(0, 64), 'unknown_field');

  const eventId = event.event_id;
  if (eventId === undefined || eventId === null) add('event_id', 'required');
  else if (typeof eventId !== 'string' || eventId.length < 1 || eventId.length > 255) add('event_id', 'invalid_event_id');

  let eventTime: Date | null = null;
  if (event.event_time === undefined || event.event_time === null) add('event_time', 'required');
  else {
    eventTime = typeof event.event_time === 'string' ? readInstant(event.event_time) : null;
    if (eventTime === null) add('event_time', 'invalid_event_time');
    else if (eventTime.getTime() < rules.now - maxEventAgeDays(rules.platform) * DAY_MS) add('event_time', 'event_time_too_old');
    else if (eventTime.getTime() > rules.now + FUTURE_TOLERANCE_MS) add('event_time', 'event_time_in_future');
  }

  const value = event.value ?? null;
  if (value !== null && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) add('value', 'invalid_value');
  const currency = event.currency ?? null;
  if (currency !== null && !(typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) && CURRENCIES.has(currency)))
    add('currency', 'invalid_currency');
  if (value !== null && currency === null) add('currency', 'currency_required');

  const text = (field: string, max: number): string | null => {
    const given = event[field];
    if (given === undefined || given === null) return null;
    if (typeof given !== 'string' || given.length === 0 || given.length > max || given.trim() === '') {
      add(field, `invalid_${field}`);
      return null;
    }
    return given;
  };
  const externalId = text('external_id', 255);
  const gclid = text('gclid', 255);
  const fbc = text('fbc', 255);
  const fbp = text('fbp', 255);
  const clientUserAgent = text('client_user_agent', 1000);
  let clientIpAddress = text('client_ip_address', 45);
  if (clientIpAddress !== null && isIP(clientIpAddress) === 0) {
    add('client_ip_address', 'invalid_client_ip_address');
    clientIpAddress = null;
  }
  let eventSourceUrl = text('event_source_url', 2048);
  if (eventSourceUrl !== null && !isWebUrl(eventSourceUrl)) {
    add('event_source_url', 'invalid_event_source_url');
    eventSourceUrl = null;
  }

  const identifiers = normalizeIdentifiers(event.identifiers ?? {});
  for (const [path, codes] of Object.entries(identifiers.errors)) for (const code of codes) add(path, code);
  const google: [UserDataTagName, Buffer][] = [
    ...identifiers.google.emails.map((hash): [UserDataTagName, Buffer] => ['email', hash]),
    ...identifiers.google.phones.map((hash): [UserDataTagName, Buffer] => ['phone', hash]),
  ];
  if (identifiers.google.firstName) google.push(['firstName', identifiers.google.firstName]);
  if (identifiers.google.lastName) google.push(['lastName', identifiers.google.lastName]);
  const meta: [UserDataTagName, Buffer][] = [
    ...identifiers.meta.emails.map((hash): [UserDataTagName, Buffer] => ['email', hash]),
    ...identifiers.meta.phones.map((hash): [UserDataTagName, Buffer] => ['phone', hash]),
  ];
  if (identifiers.meta.firstName) meta.push(['firstName', identifiers.meta.firstName]);
  if (identifiers.meta.lastName) meta.push(['lastName', identifiers.meta.lastName]);
  if (identifiers.meta.country) meta.push(['country', identifiers.meta.country]);
  if (identifiers.meta.zip) meta.push(['zip', identifiers.meta.zip]);

  // Validate first (SPEC 10.4): an event the platform could not match would be refused there.
  const googleMatch = identifiers.google.emails.length > 0 || identifiers.google.phones.length > 0 || gclid !== null;
  const metaMatch =
    identifiers.meta.emails.length > 0 ||
    identifiers.meta.phones.length > 0 ||
    externalId !== null ||
    fbc !== null ||
    fbp !== null ||
    identifiers.mobileAdId !== undefined ||
    (clientIpAddress !== null && clientUserAgent !== null);
  if (!errors['identifiers'] && Object.keys(identifiers.errors).length === 0) {
    if (rules.platform === 'google_ads' && !googleMatch) add('identifiers', 'no_match_key');
    else if (rules.platform === 'meta_ads' && !metaMatch) add('identifiers', 'no_match_key');
    else if (rules.platform === null && !googleMatch && !metaMatch) add('identifiers', 'no_match_key');
  }
  if (rules.platform === 'meta_ads' && rules.metaActionSource === 'website') {
    if (event.client_user_agent === undefined || event.client_user_agent === null) add('client_user_agent', 'required_for_website');
    if (event.event_source_url === undefined || event.event_source_url === null) add('event_source_url', 'required_for_website');
  }

  if (Object.keys(errors).length > 0) return { errors };
  return {
    row: {
      eventId: eventId as string,
      eventTime: eventTime!,
      value: value as number | null,
      currency: currency as string | null,
      externalId,
      googleUserData: packUserData(google),
      metaUserData: packUserData(meta),
      countryCode: identifiers.countryCode ?? null,
      postalCode: identifiers.postalCode ?? null,
      mobileAdId: identifiers.mobileAdId ?? null,
      gclid,
      fbc,
      fbp,
      clientIpAddress,
      clientUserAgent,
      eventSourceUrl,
    },
  };
}

function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A request's events read (SPEC 10.4), before the database: each checked against `rules` on its
 * own; a rejected one keeps its index and errors, and a repeat of an event_id the request already
 * carried is counted in `repeated` (a duplicate, not an error).
 */
export function readSignalEvents(
  input: unknown[],
  rules: EventRules,
): { rows: SignalEventRow[]; rejected: { index: number; errors: EventErrors }[]; repeated: number } {
  const rows: SignalEventRow[] = [];
  const rejected: { index: number; errors: EventErrors }[] = [];
  const seen = new Set<string>();
  let repeated = 0;
  input.forEach((event, index) => {
    const read = readSignalEvent(event, rules);
    if ('errors' in read) rejected.push({ index, errors: read.errors });
    else if (seen.has(read.row.eventId)) repeated++;
    else {
      seen.add(read.row.eventId);
      rows.push(read.row);
    }
  });
  return { rows, rejected, repeated };
}
