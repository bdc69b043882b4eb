import { nextAttemptAt, RETRY_WINDOW_MS } from './webhook-delivery.job.js';

describe('webhook retry schedule', () => {
  const created = new Date('2026-11-26T10:00:00.000Z');
  const after = (date: Date, from: Date) => date.getTime() - from.getTime();

  it('doubles the base per attempt, with at most a tenth more at random', () => {
    for (const [attempt, base] of [
      [1, 30_000],
      [2, 60_000],
      [5, 480_000],
    ] as const) {
      const delay = after(nextAttemptAt(created, created, attempt, 30), created);
      expect(delay).toBeGreaterThanOrEqual(base);
      expect(delay).toBeLessThanOrEqual(base * 1.1);
    }
  });

  it('waits at most about four hours between attempts, and never past the 24-hour window', () => {
    const late = new Date(created.getTime() + 5 * 3600 * 1000);
    expect(after(nextAttemptAt(created, late, 12, 30), late)).toBeLessThanOrEqual(4.4 * 3600 * 1000);
    const nearEnd = new Date(created.getTime() + RETRY_WINDOW_MS - 60_000);
    expect(nextAttemptAt(created, nearEnd, 14, 30).getTime()).toBe(created.getTime() + RETRY_WINDOW_MS);
  });

  it("honours the endpoint's Retry-After when it asks for longer", () => {
    expect(after(nextAttemptAt(created, created, 1, 30, 600), created)).toBe(600_000);
    expect(after(nextAttemptAt(created, created, 1, 0, 0), created)).toBe(0);
  });
});
