import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * Secrets never reach a log line: header maps are redacted wholesale for X-API-Key and
 * authorization, and any field named like a credential is censored wherever it sits.
 */
export const REDACTED_PATHS = [
  'headers["x-api-key"]',
  'headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.authorization',
  'apiKey',
  'key',
  'secret',
  'password',
  '*.apiKey',
  '*.secret',
  '*.password',
];

export function createLogger(level: string, destination?: DestinationStream, name = 'gateway'): Logger {
  const options = {
    name,
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
