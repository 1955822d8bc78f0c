/**
 * The worker's pino logger. Secrets must never reach a log line: credentials live in
 * BrokerCredentials (which serializes as "[redacted]"), no log call is given a kafkajs
 * config object, and the redact list below catches the usual names should one slip in.
 */
import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

const REDACT_PATHS = [
  'password',
  'username',
  'sasl',
  'apiKey',
  'apiSecret',
  'credentials',
  'token',
  '*.token',
  '*.password',
  '*.username',
  '*.sasl',
  '*.apiKey',
  '*.apiSecret',
  '*.credentials',
  'env.BROKER_API_KEY',
  'env.BROKER_API_SECRET',
];

export function createLogger(level: string, workerId: string): Logger {
  return pino({
    level,
    base: { service: 'broker-worker', workerId },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
