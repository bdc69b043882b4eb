import { retryAfterSeconds } from './provider-call.js';

describe('retryAfterSeconds', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');

  it('reads delay-seconds and an HTTP date (RFC 9110), a past date as 0', () => {
    expect(retryAfterSeconds('30', now)).toBe(30);
    expect(retryAfterSeconds(' 0 ', now)).toBe(0);
    expect(retryAfterSeconds('Fri, 01 May 2026 12:01:30 GMT', now)).toBe(90);
    expect(retryAfterSeconds('Fri, 01 May 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('gives undefined for a missing or unreadable header, and caps a wait at a day', () => {
    expect(retryAfterSeconds(null, now)).toBeUndefined();
    expect(retryAfterSeconds('', now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds('-5', now)).toBeUndefined();
    expect(retryAfterSeconds('9999999', now)).toBe(86_400);
  });
});
