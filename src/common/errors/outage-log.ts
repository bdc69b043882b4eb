import type { Logger } from 'pino';
import type { Dependency } from './database-errors.js';

const OUTAGE_LOG_WINDOW_MS = 10_000;

/**
 * Error lines for dependency outages, at most one per dependency per 10 s for the whole process
 * (one instance, provided by AppModule, shared by the exception filter and the MCP endpoint):
 * during an outage every request fails the same way, and a line per request would bury everything
 * else (and cost the disk). The next line written says how many were left out since the previous one.
 */
export class OutageLog {
  private readonly windows = new Map<Dependency, { loggedAtMs: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Logs `error` at level error with `fields` (which carry the request id), unless this dependency was logged in the last 10 s. */
  report(dependency: Dependency, error: unknown, fields: Record<string, unknown>, message = `${dependency} unavailable`): void {
    const now = this.nowMs();
    const window = this.windows.get(dependency);
    if (window && now - window.loggedAtMs < OUTAGE_LOG_WINDOW_MS) {
      window.suppressed++;
      return;
    }
    this.logger.error({ err: error, dependency, ...fields, suppressed: window?.suppressed ?? 0 }, message);
    this.windows.set(dependency, { loggedAtMs: now, suppressed: 0 });
  }
}
