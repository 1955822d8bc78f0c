/**
 * The BROKER_* settings, parsed and checked once at start. Both the broker worker (which
 * connects) and the gateway (which reports configuration in event_capabilities) read them
 * through this module, so the two can never disagree about what "configured" means.
 *
 * A malformed value throws SettingsError naming the variable (the process should stop);
 * a missing broker address or missing credentials is not an error but "unconfigured",
 * reported by `brokerReadiness` and by every event tool.
 */
import { groupNameProblem, topicNameProblem } from './event/names.ts';

export const SECURITY_PROTOCOLS = ['SASL_SSL', 'SASL_PLAINTEXT', 'SSL', 'PLAINTEXT'] as const;
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** A setting has a value that cannot be used; the message names the variable. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/**
 * util.inspect's hook, by its registered name (Node documents `util.inspect.custom` as this
 * symbol): importing node:util would load its argument parser and MIME modules in every
 * process that reads broker settings.
 */
const INSPECT_CUSTOM = Symbol.for('nodejs.util.inspect.custom');

/**
 * SASL username and password. Kept out of every serialization path: JSON.stringify and
 * util.inspect (so pino, console.log and error dumps) print "[redacted]".
 */
export class BrokerCredentials {
  readonly #username: string;
  readonly #password: string;
  constructor(username: string, password: string) {
    this.#username = username;
    this.#password = password;
  }
  get username(): string {
    return this.#username;
  }
  get password(): string {
    return this.#password;
  }
  toJSON(): string {
    return '[redacted]';
  }
  [INSPECT_CUSTOM](): string {
    return '[redacted]';
  }
}

export interface BrokerSettings {
  /** host:port entries; empty when BROKER_BOOTSTRAP_SERVERS is unset. */
  bootstrapServers: string[];
  securityProtocol: SecurityProtocol;
  saslMechanism: SaslMechanism;
  /** Both BROKER_API_KEY and BROKER_API_SECRET, or null when either is missing. */
  credentials: BrokerCredentials | null;
  /** Which of the two credential variables are set, for reporting what is missing. */
  apiKeySet: boolean;
  apiSecretSet: boolean;
  defaultTopic: string | null;
  consumerGroup: string | null;
  /** True only when BROKER_ALLOW_TOPIC_ADMIN is exactly `true`. */
  allowTopicAdmin: boolean;
  /** PEM file with the CA that signed the brokers' certificates (SSL and SASL_SSL). */
  sslCaFile: string | null;
  clientId: string;
}

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined) return null;
  const trimmed = raw.trim();
  return trimmed.length === 0 ? null : trimmed;
}

function check(name: string, problemOf: (raw: string) => string | null, raw: string): string {
  const problem = problemOf(raw);
  if (problem) throw new SettingsError(name, problem);
  return raw;
}

const hostPort = /^(\[[0-9a-fA-F:.]+\]|[^\s:/,[\]]+):(\d{1,5})$/;

function parseBootstrap(raw: string | null): string[] {
  if (raw === null) return [];
  const entries = raw
    .split(',')
    .map((part) => part.trim().replace(/^[a-zA-Z_]+:\/\//, ''))
    .filter((part) => part.length > 0);
  for (const entry of entries) {
    const match = hostPort.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65_535) {
      throw new SettingsError(
        'BROKER_BOOTSTRAP_SERVERS',
        `"${entry}" is not host:port; write a comma-separated list such as broker1:9092,broker2:9092`,
      );
    }
  }
  return entries;
}

function parseEnum<T extends string>(
  name: string,
  allowed: readonly T[],
  raw: string | null,
  fallback: T,
): T {
  if (raw === null) return fallback;
  const upper = raw.toUpperCase();
  const normal = name === 'BROKER_SASL_MECHANISM' ? upper.replace(/_/g, '-') : upper.replace(/-/g, '_');
  const found = allowed.find((option) => option === normal);
  if (!found) throw new SettingsError(name, `"${raw}" is not one of ${allowed.join(', ')}`);
  return found;
}

export function parseBrokerSettings(env: Env = process.env): BrokerSettings {
  const apiKey = value(env, 'BROKER_API_KEY');
  const apiSecret = env.BROKER_API_SECRET && env.BROKER_API_SECRET.length > 0 ? env.BROKER_API_SECRET : null;
  const defaultTopic = value(env, 'BROKER_DEFAULT_TOPIC');
  const consumerGroup = value(env, 'BROKER_CONSUMER_GROUP');
  return {
    bootstrapServers: parseBootstrap(value(env, 'BROKER_BOOTSTRAP_SERVERS')),
    securityProtocol: parseEnum(
      'BROKER_SECURITY_PROTOCOL',
      SECURITY_PROTOCOLS,
      value(env, 'BROKER_SECURITY_PROTOCOL'),
      'SASL_SSL',
    ),
    saslMechanism: parseEnum(
      'BROKER_SASL_MECHANISM',
      SASL_MECHANISMS,
      value(env, 'BROKER_SASL_MECHANISM'),
      'PLAIN',
    ),
    credentials: apiKey !== null && apiSecret !== null ? new BrokerCredentials(apiKey, apiSecret) : null,
    apiKeySet: apiKey !== null,
    apiSecretSet: apiSecret !== null,
    defaultTopic:
      defaultTopic === null ? null : check('BROKER_DEFAULT_TOPIC', topicNameProblem, defaultTopic),
    consumerGroup:
      consumerGroup === null ? null : check('BROKER_CONSUMER_GROUP', groupNameProblem, consumerGroup),
    allowTopicAdmin: env.BROKER_ALLOW_TOPIC_ADMIN === 'true',
    sslCaFile: value(env, 'BROKER_SSL_CA_FILE'),
    clientId: value(env, 'BROKER_CLIENT_ID') ?? 'mcp-event-gateway',
  };
}

export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_SSL' || protocol === 'SASL_PLAINTEXT';
}

export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_SSL' || protocol === 'SSL';
}

export interface BrokerReadiness {
  configured: boolean;
  brokerConfigured: boolean;
  credentialsConfigured: boolean;
  /** Names of the settings that must be set before the event tools can work. */
  missingSettings: string[];
}

export function brokerReadiness(settings: BrokerSettings): BrokerReadiness {
  const missing: string[] = [];
  const brokerConfigured = settings.bootstrapServers.length > 0;
  if (!brokerConfigured) missing.push('BROKER_BOOTSTRAP_SERVERS');
  const needsCredentials = usesSasl(settings.securityProtocol);
  if (needsCredentials && !settings.apiKeySet) missing.push('BROKER_API_KEY');
  if (needsCredentials && !settings.apiSecretSet) missing.push('BROKER_API_SECRET');
  const credentialsConfigured = settings.credentials !== null;
  return {
    configured: missing.length === 0,
    brokerConfigured,
    credentialsConfigured,
    missingSettings: missing,
  };
}
