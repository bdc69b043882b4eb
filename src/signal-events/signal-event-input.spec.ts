import { createHash } from 'node:crypto';
import { unpackUserData } from './packed-user-data.js';
import { readInstant, readSignalEvent, type SignalEventRow } from './signal-event-input.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const NOW = Date.parse('2026-11-21T10:00:00.000Z');
const rules = { platform: 'meta_ads' as const, metaActionSource: 'system_generated', now: NOW };

function row(input: unknown, overrides: Partial<typeof rules> | { platform: 'google_ads' | null } = {}): SignalEventRow {
  const read = readSignalEvent(input, { ...rules, ...overrides });
  if ('errors' in read) throw new Error(JSON.stringify(read.errors));
  return read.row;
}

describe('readSignalEvent (SPEC 10.4)', () => {
  it('hashes identifiers in each platform’s form and keeps click ids, IP address and user agent as given', () => {
    const read = row({
      event_id: 'e-1',
      event_time: '2026-11-21T09:00:00+01:00',
      value: 0,
      currency: 'JPY',
      identifiers: { email: ' Jane.Doe+x@gmail.com ', phone: '+1 (555) 123-4567', country_code: 'us', postal_code: '10001-1234' },
      fbc: 'fb.1.1700000000000.Ab',
      client_ip_address: '2001:db8::1',
      client_user_agent: 'UA',
    });
    expect(read).toMatchObject({
      eventId: 'e-1',
      eventTime: new Date('2026-11-21T08:00:00.000Z'),
      value: 0,
      currency: 'JPY',
      countryCode: 'US',
      postalCode: '10001-1234',
      fbc: 'fb.1.1700000000000.Ab',
      clientIpAddress: '2001:db8::1',
      clientUserAgent: 'UA',
    });
    expect(unpackUserData(read.googleUserData)).toMatchObject({ email: [sha('janedoe@gmail.com')], phone: [sha('+15551234567')] });
    expect(unpackUserData(read.metaUserData)).toMatchObject({
      email: [sha('jane.doe+x@gmail.com')],
      phone: [sha('15551234567')],
      country: [sha('us')],
      zip: [sha('10001')],
    });
    expect(JSON.stringify(read)).not.toMatch(/jane|555/i);
  });

  it.each([
    ['2026-11-21T09:00:00Z', '2026-11-21T09:00:00.000Z'],
    ['2026-11-21T09:00Z', '2026-11-21T09:00:00.000Z'],
    ['2026-11-21T14:00:00.123456789+05', '2026-11-21T09:00:00.123Z'],
    ['2026-11-21T14:30:00+0530', '2026-11-21T09:00:00.000Z'],
    ['2026-11-21T04:00:00-05:00', '2026-11-21T09:00:00.000Z'],
    ['2024-02-29T09:00:00Z', '2024-02-29T09:00:00.000Z'],
    ['2026-11-21T00:30:00+01:00', '2026-11-20T23:30:00.000Z'],
  ])('reads %s as the instant %s', (text, instant) => {
    expect(readInstant(text)?.toISOString()).toBe(instant);
  });

  it.each([
    '2026-09-31T10:00:00Z',
    '2100-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-00T00:00:00Z',
    '2026-11-21T09:00:60Z',
    '2026-11-21T09:00:00+05:60',
    '2026-11-21 09:00:00Z',
  ])('refuses %s, which names no instant', (text) => {
    expect(readInstant(text)).toBeNull();
  });

  it.each<[string, Record<string, unknown>, Record<string, string[]>]>([
    ['a Meta event older than 7 days', { event_time: '2026-11-14T09:59:00Z' }, { event_time: ['event_time_too_old'] }],
    ['more than 5 minutes ahead', { event_time: '2026-11-21T10:06:00Z' }, { event_time: ['event_time_in_future'] }],
    ['a time without zone', { event_time: '2026-11-21T09:00:00' }, { event_time: ['invalid_event_time'] }],
    ['a day the month does not have', { event_time: '2026-11-31T09:00:00Z' }, { event_time: ['invalid_event_time'] }],
    ['February 29 of a common year', { event_time: '2026-02-29T09:00:00Z' }, { event_time: ['invalid_event_time'] }],
    ['an hour past 23', { event_time: '2026-11-20T24:00:00Z' }, { event_time: ['invalid_event_time'] }],
    ['a minute past 59', { event_time: '2026-11-21T09:60:00Z' }, { event_time: ['invalid_event_time'] }],
    ['an offset past 23 hours', { event_time: '2026-11-21T09:00:00+24:00' }, { event_time: ['invalid_event_time'] }],
    ['a negative value', { value: -0.01, currency: 'EUR' }, { value: ['invalid_value'] }],
    ['a value without currency', { value: 3 }, { currency: ['currency_required'] }],
    ['a made-up currency', { value: 3, currency: 'XYZ' }, { currency: ['invalid_currency'] }],
    ['a lowercase currency', { value: 3, currency: 'eur' }, { currency: ['invalid_currency'] }],
    ['an event id too long', { event_id: 'x'.repeat(256) }, { event_id: ['invalid_event_id'] }],
    ['an IP address that is none', { client_ip_address: 'localhost' }, { client_ip_address: ['invalid_client_ip_address'] }],
    ['a page that is not http', { event_source_url: 'javascript:alert(1)' }, { event_source_url: ['invalid_event_source_url'] }],
  ])('rejects %s', (_name, change, errors) => {
    const read = readSignalEvent({ event_id: 'e', event_time: '2026-11-21T09:00:00Z', fbp: 'fb.1.1700000000000.1', ...change }, rules);
    expect(read).toEqual({ errors });
  });

  it('takes Google events up to 90 days old, and needs something each platform can match', () => {
    expect(row({ event_id: 'g', event_time: '2026-08-24T10:00:00Z', gclid: 'abc' }, { platform: 'google_ads' }).gclid).toBe('abc');
    expect(
      readSignalEvent({ event_id: 'g', event_time: '2026-11-21T09:00:00Z', fbp: 'fb.1.1.1' }, { ...rules, platform: 'google_ads' }),
    ).toEqual({
      errors: { identifiers: ['no_match_key'] },
    });
    expect(readSignalEvent({ event_id: 'm', event_time: '2026-11-21T09:00:00Z', gclid: 'abc' }, rules)).toEqual({
      errors: { identifiers: ['no_match_key'] },
    });
  });

  it('asks a Meta website event for its user agent and page', () => {
    expect(
      readSignalEvent({ event_id: 'w', event_time: '2026-11-21T09:00:00Z', fbp: 'fb.1.1.1' }, { ...rules, metaActionSource: 'website' }),
    ).toEqual({
      errors: { client_user_agent: ['required_for_website'], event_source_url: ['required_for_website'] },
    });
  });
});
