import type { DestinationFailure } from './destination-types.js';
import { retryDelaySeconds } from './retry-schedule.js';

const throttled = (retryAfterSeconds: number | null): Extract<DestinationFailure, { kind: 'retryable' }> => ({
  kind: 'retryable',
  reason: 'rate_limited',
  retryAfterSeconds,
  platformCode: null,
  detail: 'slow down',
});

describe('retryDelaySeconds', () => {
  it('waits what the platform asked for', () => {
    expect(retryDelaySeconds(throttled(42), 3, 5)).toBe(42);
  });

  it('doubles from the base with jitter between half and one and a half times', () => {
    const lowest = () => 0;
    const highest = () => 1000;
    expect(retryDelaySeconds(throttled(null), 1, 5, lowest)).toBe(2.5);
    expect(retryDelaySeconds(throttled(null), 1, 5, highest)).toBe(7.5);
    expect(retryDelaySeconds(throttled(null), 3, 5, lowest)).toBe(10);
    expect(retryDelaySeconds(throttled(null), 3, 5, highest)).toBe(30);
  });

  it('never waits longer than a day, and a base of 0 retries at once', () => {
    expect(retryDelaySeconds(throttled(null), 40, 5)).toBe(86_400);
    expect(retryDelaySeconds(throttled(null), 2, 0)).toBe(0);
  });
});
