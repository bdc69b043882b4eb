/**
 * The source of "now" for everything that expires (tokens, keys, throttles), so that tests can
 * move time instead of sleeping. Production uses the system clock.
 */
export class Clock {
  now(): Date {
    return new Date();
  }

  nowMs(): number {
    return Date.now();
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }
}

/** A clock a test can set and move. */
export class SettableClock extends Clock {
  private offsetMs = 0;

  override nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  override now(): Date {
    return new Date(this.nowMs());
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  reset(): void {
    this.offsetMs = 0;
  }
}
