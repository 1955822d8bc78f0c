import { LocalKafkaError } from './errors.ts';

export const HOST = '127.0.0.1';

export interface BrokerPorts {
  plaintext: number;
  saslPlaintext: number;
  saslSsl: number | null;
  controller: number;
}

/** One voter of the controller quorum: every node of a cluster is one (combined mode). */
export interface Voter {
  nodeId: number;
  controllerPort: number;
}

export interface BrokerConfigInput {
  ports: BrokerPorts;
  /** Default 1. */
  nodeId?: number;
  /** Default: this node alone. */
  voters?: Voter[];
  logDir: string;
  users: Record<string, string>;
  initialRebalanceDelayMs: number;
  keystore: { path: string; password: string } | null;
}

/**
 * java.util.Properties reads ISO-8859-1 and treats `\` as an escape, so a value is escaped for
 * both; leading spaces would otherwise be trimmed and line breaks would end the value.
 */
export function escapePropertyValue(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code > 0x7e) {
      // Characters outside the BMP become a surrogate pair of \u escapes, as Properties expects.
      for (const unit of String.fromCodePoint(code).split('')) {
        out += `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
      }
    } else out += char;
  }
  return out.startsWith(' ') ? `\\${out}` : out;
}

export function renderProperties(entries: Array<[string, string | number | boolean]>): string {
  return `${entries.map(([key, value]) => `${key}=${escapePropertyValue(String(value))}`).join('\n')}\n`;
}

/**
 * Kafka's JAAS parser tokenises option names as words (letters, digits, `_`, `-`, `$`), so a user
 * name outside that set would silently break the login module; reject it up front instead.
 */
export function validateUsers(users: Record<string, string>): void {
  const names = Object.keys(users);
  if (names.length === 0) throw new LocalKafkaError('BAD_OPTION', 'at least one SASL/PLAIN user is required');
  for (const name of names) {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) {
      throw new LocalKafkaError(
        'BAD_OPTION',
        `SASL user name ${JSON.stringify(name)} is not allowed: use letters, digits, '_' and '-' only`,
      );
    }
    if (users[name] === '')
      throw new LocalKafkaError('BAD_OPTION', `SASL user ${name} has an empty password`);
  }
}

/** A JAAS quoted string: backslash and double quote are the only characters that need escaping. */
function jaasQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function plainJaas(users: Record<string, string>): string {
  const options = Object.entries(users).map(([name, password]) => `user_${name}=${jaasQuote(password)}`);
  return `org.apache.kafka.common.security.plain.PlainLoginModule required ${options.join(' ')};`;
}

/**
 * Replication settings for a cluster of `brokers` nodes. One node can hold one replica. With
 * three, every partition (the group offsets and transaction state too) has three replicas and
 * a write needs two of them, so one node can die without losing an acknowledged write or
 * refusing new ones: the settings a managed cluster runs with.
 */
function replication(brokers: number): Array<[string, number]> {
  const factor = Math.min(brokers, 3);
  const minIsr = factor >= 3 ? 2 : 1;
  return [
    ['default.replication.factor', factor],
    ['min.insync.replicas', minIsr],
    ['offsets.topic.replication.factor', factor],
    ['offsets.topic.num.partitions', 1],
    ['transaction.state.log.replication.factor', factor],
    ['transaction.state.log.min.isr', minIsr],
    ['share.coordinator.state.topic.replication.factor', factor],
    ['share.coordinator.state.topic.min.isr', minIsr],
  ];
}

/**
 * One KRaft node acting as broker and controller. Clients get PLAINTEXT, SASL_PLAINTEXT and
 * (optionally) SASL_SSL; brokers talk to each other over PLAINTEXT so they need no credentials
 * of their own. In a cluster every node is also a controller voter (a quorum of all nodes).
 */
export function renderServerProperties(input: BrokerConfigInput): string {
  const { ports } = input;
  const nodeId = input.nodeId ?? 1;
  const voters = input.voters ?? [{ nodeId, controllerPort: ports.controller }];
  const clientListeners: Array<[string, number]> = [
    ['PLAINTEXT', ports.plaintext],
    ['SASL_PLAINTEXT', ports.saslPlaintext],
  ];
  if (ports.saslSsl !== null) clientListeners.push(['SASL_SSL', ports.saslSsl]);
  const listener = ([name, port]: [string, number]) => `${name}://${HOST}:${port}`;
  const jaas = plainJaas(input.users);

  const entries: Array<[string, string | number | boolean]> = [
    ['process.roles', 'broker,controller'],
    ['node.id', nodeId],
    ['controller.quorum.voters', voters.map((v) => `${v.nodeId}@${HOST}:${v.controllerPort}`).join(',')],
    ['controller.listener.names', 'CONTROLLER'],
    [
      'listeners',
      [...clientListeners, ['CONTROLLER', ports.controller] as [string, number]].map(listener).join(','),
    ],
    ['advertised.listeners', clientListeners.map(listener).join(',')],
    ['inter.broker.listener.name', 'PLAINTEXT'],
    [
      'listener.security.protocol.map',
      'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
    ],
    ['sasl.enabled.mechanisms', 'PLAIN'],
    ['listener.name.sasl_plaintext.sasl.enabled.mechanisms', 'PLAIN'],
    ['listener.name.sasl_plaintext.plain.sasl.jaas.config', jaas],
    ['log.dirs', input.logDir],
    ['num.partitions', 1],
    ...replication(voters.length),
    // The product promises that producing to a missing topic fails rather than creating it.
    ['auto.create.topics.enable', false],
    ['group.initial.rebalance.delay.ms', input.initialRebalanceDelayMs],
  ];
  if (ports.saslSsl !== null) {
    if (!input.keystore) throw new Error('a SASL_SSL listener needs a keystore');
    entries.push(
      ['listener.name.sasl_ssl.sasl.enabled.mechanisms', 'PLAIN'],
      ['listener.name.sasl_ssl.plain.sasl.jaas.config', jaas],
      ['listener.name.sasl_ssl.ssl.keystore.type', 'PKCS12'],
      ['listener.name.sasl_ssl.ssl.keystore.location', input.keystore.path],
      ['listener.name.sasl_ssl.ssl.keystore.password', input.keystore.password],
      ['listener.name.sasl_ssl.ssl.key.password', input.keystore.password],
    );
  }
  return renderProperties(entries);
}

/**
 * Kafka 4.x logs through log4j2. Everything goes to stdout, which the launcher points at the log
 * file, so JVM start-up errors and broker logs end up in one place to quote when start fails.
 * The properties format needs no extra jars (YAML would need jackson-dataformat-yaml at runtime).
 */
export function renderLog4j2Properties(): string {
  return renderProperties([
    ['status', 'warn'],
    // Log4j's own shutdown hook would close the appender before Kafka logs its shutdown steps.
    ['shutdownHook', 'disable'],
    ['appender.out.type', 'Console'],
    ['appender.out.name', 'out'],
    ['appender.out.layout.type', 'PatternLayout'],
    ['appender.out.layout.pattern', '[%d] %p %m (%c)%n'],
    ['rootLogger.level', 'INFO'],
    ['rootLogger.appenderRef.out.ref', 'out'],
    // Per-request and state-change chatter drowns out the lines that explain a failure.
    ['logger.request.name', 'kafka.request.logger'],
    ['logger.request.level', 'WARN'],
    ['logger.state.name', 'state.change.logger'],
    ['logger.state.level', 'WARN'],
    ['logger.clients.name', 'org.apache.kafka.clients'],
    ['logger.clients.level', 'WARN'],
  ]);
}
