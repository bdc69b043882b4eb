import { pino, type Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';

/**
 * Paths pino blanks out wherever they appear in a logged object: a last line of defence, since
 * request logs are built field by field and never include headers or bodies in the first place.
 */
const REDACTED_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'access',
  'refresh',
  'key',
  '*.key',
  'secret',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  // The web interface's refresh token travels in a cookie (src/web/session-cookie.ts).
  'cookie',
  '*.cookie',
  'headers.cookie',
  'req.headers.cookie',
  'set-cookie',
  '*["set-cookie"]',
];

/** What a failed statement's error may carry that comes from users: bound values, row contents, echoed input. */
const DATABASE_ERROR_FIELDS = ['parameters', 'detail', 'where', 'driverError'];

/**
 * pino's error serializer, minus what a database error carries from the request: TypeORM's
 * QueryFailedError holds the statement's parameters (user content, token prefixes and hashes)
 * and the driver's `detail` echoes row values. The SQL text, SQLSTATE code and constraint stay,
 * which is what an operator needs to find the cause.
 */
export function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const driver = (error as { driverError?: { code?: unknown; constraint?: unknown } }).driverError;
  for (const field of DATABASE_ERROR_FIELDS) delete serialized[field];
  if (driver) {
    serialized.code ??= driver.code;
    serialized.constraint ??= driver.constraint;
  }
  if (serialized.cause) serialized.cause = serializeError(serialized.cause);
  return serialized;
}

/** What every logger of the service shares: level label, ISO time, no pid or hostname. */
const FORMAT = {
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
} satisfies pino.LoggerOptions;

export function createLogger(config: Pick<AppConfig, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      ...FORMAT,
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    destination,
  );
}

/**
 * The logger of the one line per request (src/logging/request-hooks.ts): same level, format and
 * destination as `logger`, without the redaction pass. That line is built field by field from
 * ids, the route and the status, so there is nothing to redact, and walking the redaction paths
 * over it on every request cost about 2% of a detail request's CPU (docs/benchmarks.md).
 */
export function requestLineLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  return pino({ ...FORMAT, level: logger.level }, destination);
}

/**
 * Where the service writes its log (stdout): asynchronous and batched. Lines gather until 4 KiB
 * are waiting, then go out in one write(2), instead of one write per request line; a timer writes
 * whatever waits at least every 250 ms, so a quiet service still logs promptly. On `exit`
 * (process.exit() included) `flushSync()` writes what is left.
 */
export function logDestinationOf(fd: number): pino.DestinationStream & { flush(): void; flushSync(): void } {
  const destination = pino.destination({ dest: fd, sync: false, minLength: 4096 });
  // flush() starts a write of what waits unless one is under way (that one carries it along).
  setInterval(() => destination.flush(), 250).unref();
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout is gone: nothing left to write to.
    }
  });
  return destination;
}
