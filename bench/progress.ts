/**
 * A one-line progress bar on stderr (stdout is kept for the results table). On a terminal it
 * redraws in place; otherwise (CI, a log file) it prints a line at every 10% so the log stays short.
 */
export class ProgressBar {
  private done = 0;
  private lastDecile = -1;
  private readonly startedAt = Date.now();
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly width = 30,
  ) {
    this.draw();
  }

  tick(amount: number): void {
    this.done = Math.min(this.total, this.done + amount);
    this.draw();
  }

  finish(): void {
    this.done = this.total;
    this.draw();
    if (this.tty) process.stderr.write('\n');
  }

  private draw(): void {
    const ratio = this.total === 0 ? 1 : this.done / this.total;
    const seconds = (Date.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? Math.round(this.done / seconds) : 0;
    const filled = Math.round(ratio * this.width);
    const line =
      `${this.label} [${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}] ` +
      `${(ratio * 100).toFixed(0).padStart(3)}% ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ` +
      `${seconds.toFixed(1)}s ${rate.toLocaleString('en-US')}/s`;
    if (this.tty) {
      process.stderr.write(`\r${line}\x1b[K`);
      return;
    }
    const decile = Math.floor(ratio * 10);
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      process.stderr.write(`${line}\n`);
    }
  }
}

/** Progress and status lines go to stderr, so stdout carries only the results table. */
export function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
