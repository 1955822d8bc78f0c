/**
 * The worker's pino logger. Secrets must never reach a log line: credentials live in
 * BrokerCredentials (which serializes as "[redacted]"), no log call is given a kafkajs
 * config object, and the redact list below catches the usual names should one slip in.
 */
import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';

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

/** pino-pretty on a terminal only, loaded then and not before (as the gateway does). */
function terminalStream(): DestinationStream | undefined {
  if (process.stdout.isTTY !== true) return undefined;
  const pretty = createRequire(import.meta.url)('pino-pretty') as (
    options: Record<string, unknown>,
  ) => DestinationStream;
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
}

export function createLogger(level: string, workerId: string): Logger {
  const options = {
    level,
    base: { service: 'broker-worker', workerId },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const terminal = terminalStream();
  return terminal ? pino(options, terminal) : pino(options);
}
