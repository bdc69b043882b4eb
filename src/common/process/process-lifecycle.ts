import type { Logger } from 'pino';
import { type AppConfig, ConfigError, loadConfig } from '../../config/app-config.js';

/**
 * The start and stop of a process of ours (`npm start`'s server, `audience-worker`), the same in
 * each: a configuration problem is one message on stderr and exit 1, and SIGTERM or SIGINT runs
 * the process's own stop once, then exits 0, or 1 when stopping failed or hung.
 */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Runs `stop` on the first SIGTERM or SIGINT. `deadlineMs` is how long the process's own drain may
 * take; a backstop 5 s beyond it exits 1 in case closing the pool itself hangs.
 */
export function stopOnSignals(logger: Logger, what: string, deadlineMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `shutting down: ${what}`);
    const force = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, deadlineMs + 5000);
    force.unref();
    try {
      await stop();
      logger.info('shutdown complete');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** Runs a process's start; a failure is one line on stderr and exit 1. */
export function runProcess(start: () => Promise<void>): void {
  start().catch((error: unknown) => {
    process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
