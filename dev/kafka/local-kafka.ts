/**
 * Real Apache Kafka on loopback for development and tests: one KRaft node (broker and
 * controller in one JVM), or a cluster of three (or five) such nodes forming one controller
 * quorum, each with PLAINTEXT, SASL_PLAINTEXT and SASL_SSL (PLAIN) listeners.
 * The CLI (cli.ts) and the test runner (test/run.ts) both start brokers through this module.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { brokersOf, type NodeStatus, nodesOf, stopLocalKafka } from './cluster-status.ts';
import { type BrokerPorts, validateUsers } from './config.ts';
import { LocalKafkaError } from './errors.ts';
import { ensureKafkaLibs } from './jars.ts';
import { findJava } from './java.ts';
import { type LaunchedNode, launchNode } from './node.ts';
import { defaultCacheDir } from './paths.ts';
import { planNodePorts, reservePorts, toBrokerPorts } from './ports.ts';
import { type ProbeTarget, waitUntilServing } from './ready.ts';
import { type BrokerState, readLayout, writeLayout } from './state.ts';
import { ensureTlsMaterial } from './tls.ts';

export {
  type LocalKafkaStatus,
  localKafkaStatus,
  type NodeStatus,
  stopLocalKafka,
} from './cluster-status.ts';
export { LocalKafkaError, type LocalKafkaErrorCode } from './errors.ts';

export const DEFAULT_PORTS = {
  plaintext: 9092,
  controller: 9093,
  saslPlaintext: 9094,
  saslSsl: 9096,
} as const;
export const DEFAULT_USERS: Readonly<Record<string, string>> = {
  admin: 'admin-secret',
  agent: 'agent-secret',
};
/** Kafka's own default, and what managed services use: the first join of a new group waits this long. */
export const DEFAULT_INITIAL_REBALANCE_DELAY_MS = 3000;
export const DEFAULT_START_TIMEOUT_MS = 90_000;
const DEFAULT_LISTENER_PORTS = {
  plaintext: DEFAULT_PORTS.plaintext,
  saslPlaintext: DEFAULT_PORTS.saslPlaintext,
  controller: DEFAULT_PORTS.controller,
  saslSsl: DEFAULT_PORTS.saslSsl,
};

export interface LocalKafkaOptions {
  /** Created if missing; a fresh KRaft log dir is formatted inside (an existing one is reused). */
  dataDir: string;
  /**
   * Nodes, each broker and controller: 1 (default), 3 or 5. A data dir keeps the count of its
   * first start. In a cluster, node n's default ports are node 1's plus 10 × (n - 1).
   */
  brokers?: number;
  /**
   * Default 9092; 0 = pick a free port. A data dir that ran before keeps its ports whenever
   * this is 0 or unset (the ports are stored in it).
   */
  plaintextPort?: number;
  /** Default 9094; 0 = pick a free port. */
  saslPlaintextPort?: number;
  /** Default 9096; 0 = pick a free port; null = no SASL_SSL listener. */
  saslSslPort?: number | null;
  /** Default 9093; 0 = pick a free port. */
  controllerPort?: number;
  /** SASL/PLAIN users, name to password. Default DEFAULT_USERS. */
  users?: Record<string, string>;
  /** Default 3000 (Kafka's own default). */
  initialRebalanceDelayMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Where the Kafka jars are cached. Default `<repo>/.cache/kafka-4.1.1`. */
  cacheDir?: string;
  /** Give up (and stop the broker) when it does not serve metadata in time. Default 90 s. */
  startTimeoutMs?: number;
  /**
   * Let the broker outlive this process (what `npm run kafka -- start` does). Default false: the
   * broker is stopped when this process exits, even if it is killed.
   */
  detached?: boolean;
  /**
   * A broker for one test run: its JVM compiles with C1 only, which costs about half the CPU
   * of both tiers over minutes (dev/kafka/broker-process.ts). Default false.
   */
  shortLived?: boolean;
}

/** One node of a running cluster. */
export interface LocalBroker {
  nodeId: number;
  /** `127.0.0.1:port` */
  plaintext: string;
  pid: number;
  logFile: string;
}

export interface LocalKafka {
  /** Bootstrap list, `127.0.0.1:port` per node, comma-separated. */
  plaintext: string;
  saslPlaintext: string;
  saslSsl: { bootstrap: string; caPemPath: string; caPem: string } | null;
  users: Record<string, string>;
  /** Node 1's. */
  pid: number;
  logFile: string;
  brokers: LocalBroker[];
  /** Every node of the data dir, whoever started it: graceful (SIGTERM, SIGKILL after 30 s), idempotent. */
  stop(): Promise<void>;
}

/**
 * Refuses a node count a local quorum cannot use. Every node is a controller voter, and the
 * quorum needs a majority: 2 nodes have no majority once one fails, so they are no safer than
 * one; even counts in general add a node without tolerating one more failure.
 */
export function checkBrokerCount(brokers: number): void {
  if (!Number.isInteger(brokers) || brokers < 1)
    throw new LocalKafkaError(
      'BAD_OPTION',
      `--brokers ${brokers} is refused: a cluster needs at least one broker (use 1 or 3)`,
    );
  if (brokers === 2)
    throw new LocalKafkaError(
      'BAD_OPTION',
      '--brokers 2 is refused: each broker is a controller voter, and two voters have no majority once one fails, so the cluster would stop at its first failure; use 1 or 3',
    );
  if (brokers % 2 === 0)
    throw new LocalKafkaError(
      'BAD_OPTION',
      `--brokers ${brokers} is refused: ${brokers} controller voters survive no more failures than ${brokers - 1}; use 1, 3 or 5`,
    );
  if (brokers > 5)
    throw new LocalKafkaError(
      'BAD_OPTION',
      `--brokers ${brokers} is refused: more than 5 local brokers is more than a development machine should run; use 1, 3 or 5`,
    );
}

function checkPort(name: string, value: number | undefined | null): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new LocalKafkaError(
      'BAD_OPTION',
      `${name} must be a port number 0-65535 (0 = any free port), got ${value}`,
    );
  }
}

/** A Kafka cluster id is 16 random bytes in URL-safe base64; one starting with '-' would read as a flag. */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function probeTargets(state: BrokerState, brokers: number, caPem: string | undefined): ProbeTarget[] {
  const [username, password] = Object.entries(state.users)[0] ?? ['', ''];
  const node = brokers === 1 ? '' : `node ${state.nodeId} `;
  const targets: ProbeTarget[] = [
    { name: `${node}PLAINTEXT ${state.plaintext}`, bootstrap: state.plaintext, brokers },
    {
      name: `${node}SASL_PLAINTEXT ${state.saslPlaintext}`,
      bootstrap: state.saslPlaintext,
      sasl: { username, password },
    },
  ];
  if (state.saslSsl && caPem) {
    targets.push({
      name: `${node}SASL_SSL ${state.saslSsl.bootstrap}`,
      bootstrap: state.saslSsl.bootstrap,
      sasl: { username, password },
      caPem,
    });
  }
  return targets;
}

/**
 * A run's own three-node cluster beside whatever else runs here: every port picked free, no
 * SASL_SSL listener (keytool costs seconds; the single broker's tests cover SASL_SSL), and
 * no first-rebalance delay. The test runner, the bench and the chaos campaign start it so.
 */
export const PRIVATE_CLUSTER = {
  brokers: 3,
  plaintextPort: 0,
  saslPlaintextPort: 0,
  saslSslPort: null,
  controllerPort: 0,
  initialRebalanceDelayMs: 0,
} as const satisfies Partial<LocalKafkaOptions>;

/**
 * Starts the nodes of a data dir that are not running (all of them, on a fresh dir) and
 * waits until every node serves and sees the whole cluster. Nodes already running are
 * left alone; when all are, this refuses (ALREADY_RUNNING).
 */
export async function startLocalKafka(options: LocalKafkaOptions): Promise<LocalKafka> {
  const log = options.log ?? (() => {});
  if (options.brokers !== undefined) checkBrokerCount(options.brokers);
  const users = { ...(options.users ?? DEFAULT_USERS) };
  validateUsers(users);
  checkPort('plaintextPort', options.plaintextPort);
  checkPort('saslPlaintextPort', options.saslPlaintextPort);
  checkPort('saslSslPort', options.saslSslPort);
  checkPort('controllerPort', options.controllerPort);
  const delay = options.initialRebalanceDelayMs ?? DEFAULT_INITIAL_REBALANCE_DELAY_MS;
  if (!Number.isInteger(delay) || delay < 0) {
    throw new LocalKafkaError(
      'BAD_OPTION',
      `initialRebalanceDelayMs must be a whole number >= 0, got ${delay}`,
    );
  }
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const detached = options.detached ?? false;

  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const had = await brokersOf(dataDir);
  // Unsaid, the count is the data dir's own: `start` after a crash needs no --brokers.
  const brokers = options.brokers ?? had ?? 1;
  if (had !== undefined && had !== brokers) {
    throw new LocalKafkaError(
      'BAD_OPTION',
      `${dataDir} holds a ${had}-broker ${had === 1 ? 'setup' : 'cluster'}, not ${brokers}: start it with --brokers ${had}, or use another data dir for ${brokers}`,
    );
  }
  const nodes = await nodesOf(dataDir, brokers);
  const down = nodes.filter((n) => !n.running);
  if (down.length === 0) {
    const first = nodes[0]!.state!;
    throw new LocalKafkaError(
      'ALREADY_RUNNING',
      `a broker from ${dataDir} is already running (pid ${first.pid}, PLAINTEXT ${first.plaintext}); ` +
        'stop it first (`npm run kafka -- stop`) or use another data dir',
    );
  }
  if (down.length < nodes.length)
    log(
      `broker${down.length === 1 ? '' : 's'} ${down.map((n) => n.nodeId).join(', ')} of ${brokers} down: starting only ${down.length === 1 ? 'it' : 'them'}`,
    );

  const { java, keytool } = await findJava();
  const libs = await ensureKafkaLibs(options.cacheDir ?? defaultCacheDir, log);

  // A node that ran before keeps its listener set unless told otherwise, so a restarted
  // cluster node never serves SASL_SSL while its peers do not.
  const sslFor = (n: NodeStatus) =>
    options.saslSslPort === undefined
      ? n.ports
        ? n.ports.saslSsl !== null
        : true
      : options.saslSslPort !== null;
  const wanted = {
    plaintext: options.plaintextPort,
    saslPlaintext: options.saslPlaintextPort,
    controller: options.controllerPort,
    saslSsl: options.saslSslPort ?? undefined,
  };
  // Every port of every node starting now is bound at once, so two free-port picks never collide.
  const requests = down.map((n) =>
    planNodePorts({
      nodeId: n.nodeId,
      brokers,
      wanted,
      defaults: DEFAULT_LISTENER_PORTS,
      withSsl: sslFor(n),
      stored: n.ports,
    }),
  );
  const reserved = await reservePorts(requests.flat());
  const ports = new Map<number, BrokerPorts>();
  for (const n of nodes) if (n.running && n.ports) ports.set(n.nodeId, n.ports);
  let at = 0;
  for (const [i, n] of down.entries()) {
    const count = requests[i]!.length;
    ports.set(n.nodeId, toBrokerPorts(reserved.slice(at, at + count), sslFor(n)));
    at += count;
  }
  const voters = nodes.map((n) => ({ nodeId: n.nodeId, controllerPort: ports.get(n.nodeId)!.controller }));

  const tls = down.some(sslFor) ? await ensureTlsMaterial(keytool, nodes[0]!.files.tlsDir) : null;
  const layout = (await readLayout(dataDir)) ?? { brokers, clusterId: newClusterId() };
  await writeLayout(dataDir, layout);

  const startedAt = Date.now();
  const launched: LaunchedNode[] = [];
  const stopLaunched = () => Promise.all(launched.map((node) => node.stop()));
  // Side by side: each format and JVM start takes seconds, and a node waits for its peers anyway.
  const results = await Promise.allSettled(
    down.map((n) =>
      launchNode({
        java,
        libs,
        files: n.files,
        nodeId: n.nodeId,
        ports: ports.get(n.nodeId)!,
        voters,
        users,
        initialRebalanceDelayMs: delay,
        tls,
        clusterId: layout.clusterId,
        detached,
        shortLived: options.shortLived ?? false,
        log,
      }),
    ),
  );
  for (const result of results) if (result.status === 'fulfilled') launched.push(result.value);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    await stopLaunched();
    throw failed.reason;
  }

  const states = nodes.map((n) => launched.find((l) => l.nodeId === n.nodeId)?.state ?? n.state!);
  const deadline = startedAt + startTimeoutMs;
  const serving = await waitUntilServing(
    states.flatMap((state) => probeTargets(state, brokers, tls?.caPem)),
    () => launched.some((node) => node.exit() !== undefined) || Date.now() > deadline,
    (pending) => log(`still waiting for ${pending.join(', ')}`),
  );
  if (!serving) {
    const exited = launched.find((node) => node.exit() !== undefined);
    // Read before stopping: shutdown lines would otherwise bury why a start timed out.
    const excerpt = await (exited ?? launched[0]!).excerpt();
    await stopLaunched();
    const which = brokers === 1 ? 'the broker' : `broker ${(exited ?? launched[0]!).nodeId}`;
    const logFile = (exited ?? launched[0]!).files.logFile;
    if (exited) {
      const how = exited.exit()!;
      throw new LocalKafkaError(
        'EXITED_DURING_START',
        `${which} exited during start (${how.signal ?? `exit code ${how.code}`}). ` +
          `The log below says why; the full log is ${logFile}.\n${excerpt}`,
      );
    }
    throw new LocalKafkaError(
      'START_TIMEOUT',
      `${brokers === 1 ? 'the broker' : `the ${brokers} brokers`} did not serve metadata on every listener within ${startTimeoutMs / 1000} s and ${down.length === 1 ? 'was' : 'were'} stopped. ` +
        `Check ${logFile}; a slow or overloaded machine may need a longer startTimeoutMs ` +
        `(--start-timeout-s).\n${excerpt}`,
    );
  }
  log(
    `${brokers === 1 ? 'broker' : `${brokers} brokers`} ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
  );

  const join = (pick: (state: BrokerState) => string) => states.map(pick).join(',');
  const first = states[0]!;
  let stopping: Promise<void> | undefined;
  return {
    plaintext: join((s) => s.plaintext),
    saslPlaintext: join((s) => s.saslPlaintext),
    saslSsl:
      first.saslSsl && tls
        ? {
            bootstrap: join((s) => s.saslSsl?.bootstrap ?? ''),
            caPemPath: first.saslSsl.caPemPath,
            caPem: tls.caPem,
          }
        : null,
    users,
    pid: first.pid,
    logFile: first.logFile,
    brokers: states.map((s, i) => ({
      nodeId: i + 1,
      plaintext: s.plaintext,
      pid: s.pid,
      logFile: s.logFile,
    })),
    stop() {
      // Our own children first (their exit events reap them), then whatever else the dir runs.
      stopping ??= stopLaunched().then(async () => {
        await stopLocalKafka(dataDir, log);
      });
      return stopping;
    },
  };
}
