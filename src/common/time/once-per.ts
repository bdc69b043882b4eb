/**
 * Lets something happen at most once per interval per key: e.g. a credential's `last_used_at` is
 * written at most once a minute, never on every request that uses it.
 */
export class OncePer {
  private readonly lastAt = new Map<number | string, number>();

  constructor(private readonly intervalMs: number) {}

  /** True (and remembers `nowMs`) when the interval has passed since the last true for `key`. */
  due(key: number | string, nowMs: number): boolean {
    if (nowMs - (this.lastAt.get(key) ?? Number.NEGATIVE_INFINITY) < this.intervalMs) return false;
    this.lastAt.set(key, nowMs);
    return true;
  }
}
