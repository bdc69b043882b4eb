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
];

export function createLogger(config: Pick<AppConfig, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}
