/**
 * `npm run kafka -- start|stop|status [options]`: the local broker for development.
 * Started brokers are detached, so they keep running after this command returns.
 */
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DEFAULT_INITIAL_REBALANCE_DELAY_MS,
  DEFAULT_PORTS,
  DEFAULT_USERS,
  LocalKafkaError,
  type LocalKafkaOptions,
  localKafkaStatus,
  startLocalKafka,
  stopLocalKafka,
} from './local-kafka.ts';
import { defaultCacheDir, defaultDevDataDir, KAFKA_VERSION } from './paths.ts';
import type { BrokerState } from './state.ts';

const usage = `usage: npm run kafka -- <start|stop|status> [options]

  start    fetch Kafka ${KAFKA_VERSION} on first use, start the broker, wait until it serves
  stop     stop it gracefully (SIGTERM; SIGKILL after 30 s)
  status   say whether it runs, and where

options (environment variable in brackets):
  --data-dir DIR            [LOCAL_KAFKA_DATA_DIR]      default ${relative(process.cwd(), defaultDevDataDir) || '.'}
  --plaintext-port N        [LOCAL_KAFKA_PLAINTEXT_PORT] default ${DEFAULT_PORTS.plaintext}
  --sasl-port N             [LOCAL_KAFKA_SASL_PORT]      default ${DEFAULT_PORTS.saslPlaintext} (SASL_PLAINTEXT)
  --sasl-ssl-port N|off     [LOCAL_KAFKA_SASL_SSL_PORT]  default ${DEFAULT_PORTS.saslSsl} (SASL_SSL)
  --controller-port N       [LOCAL_KAFKA_CONTROLLER_PORT] default ${DEFAULT_PORTS.controller}
  --user NAME:PASSWORD      [LOCAL_KAFKA_USERS=a:x,b:y]  repeatable; default ${Object.entries(DEFAULT_USERS)
    .map(([u, p]) => `${u}:${p}`)
    .join(', ')}
  --rebalance-delay-ms N    [LOCAL_KAFKA_REBALANCE_DELAY_MS] group.initial.rebalance.delay.ms, default ${DEFAULT_INITIAL_REBALANCE_DELAY_MS}
  --start-timeout-s N       default 90

Port 0 picks a free port. Jars are cached in ${relative(process.cwd(), defaultCacheDir)}.`;

class UsageError extends Error {}

function port(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535)
    throw new UsageError(`${name}: expected a port number, got ${raw}`);
  return Number(raw);
}

function wholeNumber(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name}: expected a whole number, got ${raw}`);
  return Number(raw);
}

function users(list: string[]): Record<string, string> | undefined {
  if (list.length === 0) return undefined;
  const result: Record<string, string> = {};
  for (const entry of list) {
    const colon = entry.indexOf(':');
    if (colon <= 0 || colon === entry.length - 1)
      throw new UsageError(`--user: expected NAME:PASSWORD, got ${entry}`);
    result[entry.slice(0, colon)] = entry.slice(colon + 1);
  }
  return result;
}

function parse(argv: string[]): { command: string; options: LocalKafkaOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'plaintext-port': { type: 'string' },
      'sasl-port': { type: 'string' },
      'sasl-ssl-port': { type: 'string' },
      'controller-port': { type: 'string' },
      user: { type: 'string', multiple: true },
      'rebalance-delay-ms': { type: 'string' },
      'start-timeout-s': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const env = process.env;
  const command = values.help ? 'help' : (positionals[0] ?? '');
  if (positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`);
  const sslRaw = values['sasl-ssl-port'] ?? env.LOCAL_KAFKA_SASL_SSL_PORT;
  const userList = values.user ?? (env.LOCAL_KAFKA_USERS ? env.LOCAL_KAFKA_USERS.split(',') : []);
  const timeoutS = wholeNumber('--start-timeout-s', values['start-timeout-s']);
  return {
    command,
    options: {
      dataDir: values['data-dir'] ?? env.LOCAL_KAFKA_DATA_DIR ?? defaultDevDataDir,
      plaintextPort: port('--plaintext-port', values['plaintext-port'] ?? env.LOCAL_KAFKA_PLAINTEXT_PORT),
      saslPlaintextPort: port('--sasl-port', values['sasl-port'] ?? env.LOCAL_KAFKA_SASL_PORT),
      saslSslPort: sslRaw === 'off' || sslRaw === 'none' ? null : port('--sasl-ssl-port', sslRaw),
      controllerPort: port('--controller-port', values['controller-port'] ?? env.LOCAL_KAFKA_CONTROLLER_PORT),
      users: users(userList.map((u) => u.trim()).filter((u) => u !== '')),
      initialRebalanceDelayMs: wholeNumber(
        '--rebalance-delay-ms',
        values['rebalance-delay-ms'] ?? env.LOCAL_KAFKA_REBALANCE_DELAY_MS,
      ),
      startTimeoutMs: timeoutS === undefined ? undefined : timeoutS * 1000,
    },
  };
}

function describe(broker: Omit<BrokerState, 'startedAt'>): string {
  const shown = (path: string) => relative(process.cwd(), path) || path;
  const lines = [
    `  PLAINTEXT        ${broker.plaintext}`,
    `  SASL_PLAINTEXT   ${broker.saslPlaintext}   (SASL/PLAIN)`,
  ];
  if (broker.saslSsl) {
    lines.push(
      `  SASL_SSL         ${broker.saslSsl.bootstrap}   (SASL/PLAIN over TLS; CA ${shown(broker.saslSsl.caPemPath)})`,
    );
  }
  lines.push(
    `  users            ${Object.entries(broker.users)
      .map(([u, p]) => `${u}:${p}`)
      .join('  ')}`,
    `  pid              ${broker.pid}`,
    `  log              ${shown(broker.logFile)}`,
  );
  return lines.join('\n');
}

async function start(options: LocalKafkaOptions): Promise<number> {
  const status = await localKafkaStatus(options.dataDir);
  if (status.running) {
    console.log(`Kafka is already running${status.serving ? '' : ' (but not answering on PLAINTEXT yet)'}:`);
    console.log(describe(status));
    return 0;
  }
  // Ctrl-C while waiting must not leave a half-started detached broker behind.
  const interrupt = () => {
    console.error('\ninterrupted: stopping the broker that was starting');
    void stopLocalKafka(options.dataDir).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const kafka = await startLocalKafka({ ...options, detached: true, log: (line) => console.log(line) });
  process.off('SIGINT', interrupt);
  process.off('SIGTERM', interrupt);
  console.log(`Kafka ${KAFKA_VERSION} is running:`);
  console.log(describe(kafka));
  console.log('Stop it with: npm run kafka -- stop');
  return 0;
}

async function stop(options: LocalKafkaOptions): Promise<number> {
  const stopped = await stopLocalKafka(options.dataDir, (line) => console.log(line));
  console.log(stopped ? 'Kafka stopped.' : `Kafka is not running (data dir ${options.dataDir}).`);
  return 0;
}

async function status(options: LocalKafkaOptions): Promise<number> {
  const current = await localKafkaStatus(options.dataDir);
  if (!current.running) {
    console.log(`Kafka is not running (data dir ${options.dataDir}).`);
    return 0;
  }
  console.log(
    current.serving
      ? 'Kafka is running:'
      : 'Kafka process is running but does not answer on PLAINTEXT (starting, or stuck: see the log):',
  );
  console.log(describe(current));
  return 0;
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const { command, options } = parsed;
  try {
    switch (command) {
      case 'start':
        return await start(options);
      case 'stop':
        return await stop(options);
      case 'status':
        return await status(options);
      case 'help':
        console.log(usage);
        return 0;
      default:
        console.error(`${command ? `unknown command: ${command}` : 'missing command'}\n\n${usage}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof LocalKafkaError) {
      console.error(`local kafka: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
