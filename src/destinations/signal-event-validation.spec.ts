import { createHash } from 'node:crypto';
import { type GoogleEvent, validateGoogleEvent } from './google-events.client.js';
import { type MetaServerEvent, validateMetaEvent } from './meta-conversions.client.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const NOW = Date.parse('2026-11-21T10:00:00.000Z');

describe('events checked as the platforms check them, before a request is sent (SPEC 10.4)', () => {
  const google: GoogleEvent = {
    transactionId: 'order-1',
    eventTimestamp: '2026-11-21T09:00:00.000Z',
    conversionValue: 10,
    currency: 'EUR',
    userData: { userIdentifiers: [{ emailAddress: sha('a@example.com') }] },
  };
  const meta: MetaServerEvent = {
    event_name: 'Purchase',
    event_time: Math.floor(NOW / 1000) - 60,
    event_id: 'order-1',
    action_source: 'website',
    event_source_url: 'https://shop.example.com/',
    user_data: { em: [sha('a@example.com')], client_user_agent: 'UA', fbp: 'fb.1.1700000000000.1' },
    custom_data: { value: 10, currency: 'eur' },
  };

  it('passes events the platforms take', () => {
    expect(validateGoogleEvent(google, NOW)).toBeUndefined();
    expect(
      validateGoogleEvent({ transactionId: 'g', eventTimestamp: google.eventTimestamp, adIdentifiers: { gclid: 'x' } }, NOW),
    ).toBeUndefined();
    expect(validateMetaEvent(meta, NOW)).toBeUndefined();
  });

  it.each<[string, Partial<GoogleEvent>, string]>([
    ['older than 90 days', { eventTimestamp: '2026-08-22T09:00:00.000Z' }, 'event_time_too_old'],
    ['a raw email', { userData: { userIdentifiers: [{ emailAddress: 'a@example.com' }] } }, 'invalid_hash'],
    ['nothing to match', { userData: { userIdentifiers: [] } }, 'no_match_key'],
    ['a negative value', { conversionValue: -1 }, 'invalid_value'],
  ])('refuses a Google event with %s', (_name, change, reason) => {
    expect(validateGoogleEvent({ ...google, ...change }, NOW)).toBe(reason);
  });

  it.each<[string, Partial<MetaServerEvent>, string]>([
    ['older than 7 days', { event_time: Math.floor(NOW / 1000) - 8 * 86_400 }, 'event_time_too_old'],
    ['a raw email', { user_data: { em: ['a@example.com'], client_user_agent: 'UA' } }, 'invalid_hash'],
    ['a website event without its page', { event_source_url: undefined }, 'website_event_incomplete'],
    ['nothing to match', { action_source: 'system_generated', user_data: {} }, 'no_match_key'],
  ])('refuses a Meta event with %s', (_name, change, reason) => {
    expect(validateMetaEvent({ ...meta, ...change }, NOW)).toBe(reason);
  });
});
