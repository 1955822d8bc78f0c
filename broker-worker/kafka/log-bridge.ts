/**
 * Routes kafkajs's own log lines into pino. Only allow-listed fields are copied, so even a
 * kafkajs log call that carried connection options could not put a credential in a line.
 * kafkajs logs at info for routine events (pausing a partition, joining a group); those go
 * to debug here so a healthy worker's log stays quiet. Its per-request "Response ..." errors
 * (namespace Connection) are answers the worker handles itself (a topic that already exists,
 * a coordinator still loading) and reports when they matter, so they go to debug as well.
 */
import { type logCreator, logLevel } from 'kafkajs';
import type { Logger } from '../logger.ts';

/** Chosen on purpose (see kafka/publisher.ts); not worth a warning on every start. */
const EXPECTED_WARNINGS = new Set([
  'Limiting retries for the idempotent producer may invalidate EoS guarantees',
]);

const SAFE_FIELDS = [
  'groupId',
  'memberId',
  'leaderId',
  'topic',
  'partition',
  'broker',
  'nodeId',
  'error',
  'retryCount',
  'retryTime',
  'groupProtocol',
  'duration',
  'isLeader',
] as const;

export function kafkaLogCreator(logger: Logger): logCreator {
  const log = logger.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log: entry }) => {
      const fields: Record<string, unknown> = { namespace };
      for (const name of SAFE_FIELDS) {
        const value = (entry as Record<string, unknown>)[name];
        if (value === undefined) continue;
        fields[name] = typeof value === 'object' && value !== null ? String(value) : value;
      }
      const message = String(entry.message);
      if (EXPECTED_WARNINGS.has(message)) return;
      if (namespace === 'Connection' && level <= logLevel.WARN) log.debug(fields, message);
      else if (level === logLevel.ERROR) log.error(fields, message);
      else if (level === logLevel.WARN) log.warn(fields, message);
      else if (level === logLevel.INFO) log.debug(fields, message);
      else log.trace(fields, message);
    };
}

export function kafkaLogLevel(pinoLevel: string): logLevel {
  switch (pinoLevel) {
    case 'trace':
      return logLevel.DEBUG;
    case 'debug':
      return logLevel.INFO;
    case 'silent':
      return logLevel.NOTHING;
    case 'fatal':
    case 'error':
      return logLevel.ERROR;
    default:
      return logLevel.WARN;
  }
}
