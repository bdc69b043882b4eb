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

export function createLogger(config: Pick<AppConfig, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    destination,
  );
}
