/**
 * `npm run kafka -- start|stop|status [options]`: the local broker for development.
 * Started brokers are detached, so they keep running after this command returns.
 */
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { runCommand, stopIfInterrupted } from '../command.ts';
import {
  DEFAULT_INITIAL_REBALANCE_DELAY_MS,
  DEFAULT_PORTS,
  DEFAULT_USERS,
  LocalKafkaError,
  type LocalKafkaOptions,
  type LocalKafkaStatus,
  localKafkaStatus,
  startLocalKafka,
  stopLocalKafka,
} from './local-kafka.ts';
import { defaultCacheDir, defaultDevDataDir, KAFKA_VERSION } from './paths.ts';

const usage = `usage: npm run kafka -- <start|stop|status> [options]

  start    fetch Kafka ${KAFKA_VERSION} on first use, start the broker(s), wait until they serve;
           on a cluster with brokers down, start only those
  stop     stop it gracefully (SIGTERM; SIGKILL after 30 s)
  status   say whether it runs, and where

options (environment variable in brackets):
  --brokers N               [LOCAL_KAFKA_BROKERS]       1 (default), 3 or 5 nodes, each broker and controller;
                            3 gives replication factor 3 and min.insync.replicas 2. Node n's
                            default ports are node 1's plus 10 x (n - 1). A data dir keeps its count.
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

Port 0 picks a free port (each broker its own). A data dir keeps the ports of its first start,
so a restart serves the same addresses. Jars are cached in ${relative(process.cwd(), defaultCacheDir)}.`;

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
      brokers: { type: 'string' },
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
      brokers: wholeNumber('--brokers', values.brokers ?? env.LOCAL_KAFKA_BROKERS),
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

function shown(path: string): string {
  return relative(process.cwd(), path) || path;
}

/** The bootstrap lines (every node's address, as clients need them), then each node. */
function describe(current: Extract<LocalKafkaStatus, { running: true }>): string {
  const lines = [
    `  PLAINTEXT        ${current.plaintext}`,
    `  SASL_PLAINTEXT   ${current.saslPlaintext}   (SASL/PLAIN)`,
  ];
  if (current.saslSsl) {
    lines.push(
      `  SASL_SSL         ${current.saslSsl.bootstrap}   (SASL/PLAIN over TLS; CA ${shown(current.saslSsl.caPemPath)})`,
    );
  }
  lines.push(
    `  users            ${Object.entries(current.users)
      .map(([u, p]) => `${u}:${p}`)
      .join('  ')}`,
  );
  if (current.nodes.length === 1) {
    lines.push(`  pid              ${current.pid}`, `  log              ${shown(current.logFile)}`);
    return lines.join('\n');
  }
  for (const node of current.nodes) {
    const address = node.ports ? `127.0.0.1:${node.ports.plaintext}` : '(no ports yet)';
    lines.push(
      node.state
        ? `  broker ${node.nodeId}         ${address}   pid ${node.state.pid}   log ${shown(node.state.logFile)}`
        : `  broker ${node.nodeId}         ${address}   DOWN (\`npm run kafka -- start\` starts only it)`,
    );
  }
  return lines.join('\n');
}

async function start(options: LocalKafkaOptions): Promise<number> {
  const status = await localKafkaStatus(options.dataDir);
  if (status.running && status.nodes.every((node) => node.running)) {
    console.log(`Kafka is already running${status.serving ? '' : ' (but not answering on PLAINTEXT yet)'}:`);
    console.log(describe(status));
    return 0;
  }
  await stopIfInterrupted(
    'the brokers',
    () => stopLocalKafka(options.dataDir),
    () => startLocalKafka({ ...options, detached: true, log: (line) => console.log(line) }),
  );
  const started = await localKafkaStatus(options.dataDir);
  if (!started.running)
    throw new LocalKafkaError('EXITED_DURING_START', 'the brokers stopped right after they started');
  console.log(`Kafka ${KAFKA_VERSION} is running:`);
  console.log(describe(started));
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

process.exitCode = await runCommand(process.argv.slice(2), {
  usage,
  parse,
  commands: { start, stop, status },
  toolError: LocalKafkaError,
  label: 'local kafka',
});
