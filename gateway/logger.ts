import { createRequire } from 'node:module';
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

/** A person watching a terminal reads lines; anything else (a file, a log shipper, PM2) gets JSON. */
export function wantsPrettyLogs(): boolean {
  return process.stdout.isTTY === true;
}

/**
 * pino-pretty is loaded only when a terminal will show it, so JSON runs (every production
 * one) never pay for it. It formats in this thread, synchronously: the same ordering as JSON.
 */
function prettyStream(): DestinationStream {
  const load = createRequire(import.meta.url);
  const pretty = load('pino-pretty') as (options: Record<string, unknown>) => DestinationStream;
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
}

export function createLogger(
  level: string,
  destination?: DestinationStream,
  name = 'gateway',
  options: { pretty?: boolean } = {},
): Logger {
  const settings = {
    name,
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(settings, destination);
  return (options.pretty ?? wantsPrettyLogs()) ? pino(settings, prettyStream()) : pino(settings);
}
