/**
 * Everything the worker reads from its environment, validated once at start. A bad value
 * stops the process with a message naming the variable; a missing broker address is not
 * bad (see shared/broker-settings.ts): the worker then runs unconfigured.
 *
 * Worker-only settings (besides the BROKER_* ones of DESIGN.md §3):
 * | BROKER_WORKER_LISTEN        | unix:<DATA_DIR>/broker-worker.sock | where the IPC server listens (unix:/path or tcp:host:port) |
 * | BROKER_WORKER_ID            | <hostname>:<pid>                   | name in status and logs |
 * | BROKER_WORKER_TOKEN         | (none)                             | shared secret gateways must send in hello; set it for TCP |
 * | BROKER_SSL_CA_FILE          | (system CAs)                       | PEM CA bundle for SSL / SASL_SSL brokers |
 * | BROKER_CLIENT_ID            | mcp-event-gateway                  | Kafka client.id |
 * | BROKER_CONSUMER_IDLE_MS     | 300000                             | a group consumer unused this long leaves its group |
 * | BROKER_MAX_CONSUMERS        | 64                                 | live group consumers; the least recently used one leaves first |
 * | BROKER_SESSION_TIMEOUT_MS   | 10000                              | group session timeout (how fast a dead worker's partitions move) |
 * | BROKER_CONSUME_LINGER_MS    | 10                                 | once a message is ready, a group poll waits this long for more |
 * | BROKER_CONSUME_ACK_TIMEOUT_MS | 30000                            | a poll answer the gateway has not settled by then is handed out again |
 * | BROKER_CONSUME_UNCOMMITTED_MAX | 100                             | per group consumer, messages handed out and not yet committed; polls wait past it |
 * | LOG_LEVEL                   | info                               | pino level |
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  type BrokerSettings,
  parseBrokerSettings,
  SettingsError,
  usesTls,
} from '../shared/broker-settings.ts';
import { defaultEndpoint, parseEndpoint, type WorkerEndpoint } from '../shared/ipc/endpoint.ts';

export interface WorkerSettings {
  broker: BrokerSettings;
  /** Contents of BROKER_SSL_CA_FILE, read at start so a wrong path fails fast. */
  sslCa: string | null;
  listen: WorkerEndpoint;
  workerId: string;
  /** BROKER_WORKER_TOKEN, or null when gateways need none. */
  token: string | null;
  consumerIdleMs: number;
  maxConsumers: number;
  sessionTimeoutMs: number;
  consumeLingerMs: number;
  consumeAckTimeoutMs: number;
  consumeUncommittedMax: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  // Number() as zod's coerce read it ("1e4" and "0x10" included); no zod at start.
  const parsed = Number(raw);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max)
    throw new SettingsError(name, `"${raw}" is not a whole number from ${min} to ${max}`);
  return parsed;
}

export function loadWorkerSettings(env: Env = process.env): WorkerSettings {
  const broker = parseBrokerSettings(env);

  let sslCa: string | null = null;
  if (broker.sslCaFile !== null) {
    try {
      sslCa = readFileSync(broker.sslCaFile, 'utf8');
    } catch (error) {
      throw new SettingsError(
        'BROKER_SSL_CA_FILE',
        `cannot read ${broker.sslCaFile}: ${(error as Error).message}`,
      );
    }
    if (!sslCa.includes('-----BEGIN CERTIFICATE-----')) {
      throw new SettingsError('BROKER_SSL_CA_FILE', `${broker.sslCaFile} holds no PEM certificate`);
    }
    if (!usesTls(broker.securityProtocol)) sslCa = null;
  }

  let listen: WorkerEndpoint;
  const listenRaw = env.BROKER_WORKER_LISTEN?.trim();
  try {
    listen = listenRaw ? parseEndpoint(listenRaw) : defaultEndpoint(env.DATA_DIR || './data');
  } catch (error) {
    throw new SettingsError('BROKER_WORKER_LISTEN', (error as Error).message);
  }

  const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const logLevelRaw = env.LOG_LEVEL?.trim().toLowerCase() || 'info';
  const logLevel = logLevels.find((level) => level === logLevelRaw);
  if (!logLevel)
    throw new SettingsError('LOG_LEVEL', `"${logLevelRaw}" is not one of ${logLevels.join(', ')}`);

  const sessionTimeoutMs = integer(env, 'BROKER_SESSION_TIMEOUT_MS', 10_000, 6000, 300_000);

  return {
    broker,
    sslCa,
    listen,
    workerId: env.BROKER_WORKER_ID?.trim() || `${hostname()}:${process.pid}`,
    token: env.BROKER_WORKER_TOKEN || null,
    consumerIdleMs: integer(env, 'BROKER_CONSUMER_IDLE_MS', 300_000, 1000, 86_400_000),
    maxConsumers: integer(env, 'BROKER_MAX_CONSUMERS', 64, 1, 10_000),
    sessionTimeoutMs,
    consumeLingerMs: integer(env, 'BROKER_CONSUME_LINGER_MS', 10, 0, 30_000),
    consumeAckTimeoutMs: integer(env, 'BROKER_CONSUME_ACK_TIMEOUT_MS', 30_000, 1000, 600_000),
    // At least one full poll (max 100), so a poll is never starved by the window alone.
    consumeUncommittedMax: integer(env, 'BROKER_CONSUME_UNCOMMITTED_MAX', 100, 100, 1_000_000),
    logLevel,
  };
}
