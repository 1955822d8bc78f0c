/**
 * A real Apache Kafka broker on loopback for development and tests: one KRaft node (broker and
 * controller in one JVM) with PLAINTEXT, SASL_PLAINTEXT and SASL_SSL (PLAIN) listeners.
 * The CLI (cli.ts) and the test runner (test/run.ts) both start brokers through this module.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { formatLogDir, spawnBroker, spawnWatchdog, terminate } from './broker-process.ts';
import { HOST, renderLog4j2Properties, renderServerProperties, validateUsers } from './config.ts';
import { LocalKafkaError, quoteOutput, tailLines } from './errors.ts';
import { brokerFiles } from './files.ts';
import { ensureKafkaLibs } from './jars.ts';
import { findJava } from './java.ts';
import { defaultCacheDir } from './paths.ts';
import { reservePorts } from './ports.ts';
import { type ProbeTarget, probe, waitUntilServing } from './ready.ts';
import { type BrokerState, clearState, isBrokerProcess, readPid, readState, writeState } from './state.ts';
import { ensureTlsMaterial } from './tls.ts';

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

export interface LocalKafkaOptions {
  /** Created if missing; a fresh KRaft log dir is formatted inside (an existing one is reused). */
  dataDir: string;
  /** Default 9092; 0 = pick a free port. */
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

export interface LocalKafka {
  /** `127.0.0.1:port` */
  plaintext: string;
  saslPlaintext: string;
  saslSsl: { bootstrap: string; caPemPath: string; caPem: string } | null;
  users: Record<string, string>;
  pid: number;
  logFile: string;
  /** Graceful (SIGTERM, SIGKILL after 30 s), idempotent. */
  stop(): Promise<void>;
}

export type LocalKafkaStatus =
  | { running: false; dataDir: string }
  | ({ running: true; dataDir: string; serving: boolean } & BrokerState);

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

async function fileSize(path: string): Promise<number> {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * What this start wrote to the log (an old run's lines never explain a new failure): the first
 * error lines, which usually name the cause, then the tail, which shows where it stopped.
 */
async function logExcerpt(path: string, offset: number): Promise<string> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const from = Math.max(offset, size - 512 * 1024);
      const buffer = Buffer.alloc(size - from);
      await handle.read(buffer, 0, buffer.length, from);
      text = buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '(the log file could not be read)';
  }
  const errors = text
    .split('\n')
    .filter((line) => /\b(ERROR|FATAL)\b|^Error|Exception:/.test(line))
    .slice(0, 5);
  const tail = quoteOutput('last lines of the broker log', tailLines(text, 20));
  return errors.length > 0
    ? `${quoteOutput('first errors in the broker log', errors.join('\n'))}\n${tail}`
    : tail;
}

function probeTargets(state: BrokerState, caPem: string | undefined): ProbeTarget[] {
  const [username, password] = Object.entries(state.users)[0] ?? ['', ''];
  const targets: ProbeTarget[] = [
    { name: `PLAINTEXT ${state.plaintext}`, bootstrap: state.plaintext },
    {
      name: `SASL_PLAINTEXT ${state.saslPlaintext}`,
      bootstrap: state.saslPlaintext,
      sasl: { username, password },
    },
  ];
  if (state.saslSsl && caPem) {
    targets.push({
      name: `SASL_SSL ${state.saslSsl.bootstrap}`,
      bootstrap: state.saslSsl.bootstrap,
      sasl: { username, password },
      caPem,
    });
  }
  return targets;
}

/** Is a broker from this data dir running (possibly started by another process)? */
export async function localKafkaStatus(dataDir: string, probeTimeoutMs = 3000): Promise<LocalKafkaStatus> {
  const files = brokerFiles(resolve(dataDir));
  const pid = await readPid(files);
  const state = await readState(files);
  if (pid === undefined || state === undefined || state.pid !== pid || !isBrokerProcess(pid, files)) {
    return { running: false, dataDir: files.dataDir };
  }
  const serving = await probe({ name: 'PLAINTEXT', bootstrap: state.plaintext }, probeTimeoutMs).then(
    () => true,
    () => false,
  );
  return { running: true, dataDir: files.dataDir, serving, ...state };
}

/**
 * Stops the broker of a data dir, whoever started it. Returns false when none was running.
 * Stale pid and state files are removed either way.
 */
export async function stopLocalKafka(
  dataDir: string,
  log: (line: string) => void = () => {},
): Promise<boolean> {
  const files = brokerFiles(resolve(dataDir));
  const pid = await readPid(files);
  if (pid === undefined || !isBrokerProcess(pid, files)) {
    await clearState(files);
    return false;
  }
  log(`stopping broker (pid ${pid})`);
  await terminate(pid, log);
  await clearState(files);
  return true;
}

export async function startLocalKafka(options: LocalKafkaOptions): Promise<LocalKafka> {
  const log = options.log ?? (() => {});
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

  const files = brokerFiles(resolve(options.dataDir));
  await mkdir(files.dataDir, { recursive: true });

  const existing = await localKafkaStatus(files.dataDir);
  if (existing.running) {
    throw new LocalKafkaError(
      'ALREADY_RUNNING',
      `a broker from ${files.dataDir} is already running (pid ${existing.pid}, PLAINTEXT ${existing.plaintext}); ` +
        'stop it first (`npm run kafka -- stop`) or use another data dir',
    );
  }
  await clearState(files);

  const { java, keytool } = await findJava();
  const libs = await ensureKafkaLibs(options.cacheDir ?? defaultCacheDir, log);

  const wantSsl = options.saslSslPort !== null;
  const requests = [
    {
      name: 'PLAINTEXT',
      port: options.plaintextPort ?? DEFAULT_PORTS.plaintext,
      flag: '--plaintext-port (option plaintextPort)',
    },
    {
      name: 'SASL_PLAINTEXT',
      port: options.saslPlaintextPort ?? DEFAULT_PORTS.saslPlaintext,
      flag: '--sasl-port (option saslPlaintextPort)',
    },
    {
      name: 'CONTROLLER',
      port: options.controllerPort ?? DEFAULT_PORTS.controller,
      flag: '--controller-port (option controllerPort)',
    },
  ];
  if (wantSsl)
    requests.push({
      name: 'SASL_SSL',
      port: options.saslSslPort ?? DEFAULT_PORTS.saslSsl,
      flag: '--sasl-ssl-port (option saslSslPort)',
    });
  const [plaintextPort, saslPort, controllerPort, sslPort] = await reservePorts(requests);
  if (plaintextPort === undefined || saslPort === undefined || controllerPort === undefined) {
    throw new Error('port reservation returned too few ports');
  }

  const tls = wantSsl ? await ensureTlsMaterial(keytool, files.tlsDir) : null;
  await writeFile(
    files.serverProperties,
    renderServerProperties({
      ports: {
        plaintext: plaintextPort,
        saslPlaintext: saslPort,
        saslSsl: sslPort ?? null,
        controller: controllerPort,
      },
      logDir: files.logDir,
      users,
      initialRebalanceDelayMs: delay,
      keystore: tls ? { path: tls.keystorePath, password: tls.keystorePassword } : null,
    }),
    { mode: 0o600 },
  );
  await writeFile(files.log4jProperties, renderLog4j2Properties());

  if (!existsSync(join(files.logDir, 'meta.properties'))) {
    log(`formatting a fresh KRaft log dir in ${files.logDir}`);
    await formatLogDir(java, libs, files, newClusterId());
  }

  const logOffset = await fileSize(files.logFile);
  await writeFile(files.logFile, `--- local-kafka start ${new Date().toISOString()} ---\n`, { flag: 'a' });
  const startedAt = Date.now();
  const child = spawnBroker({ java, libs, files, detached, shortLived: options.shortLived ?? false });
  const pid = await new Promise<number>((resolvePid, reject) => {
    child.once('spawn', () => resolvePid(child.pid!));
    child.once('error', (error) =>
      reject(new LocalKafkaError('JAVA_MISSING', `could not run ${java}: ${error.message}`)),
    );
  });
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.once('exit', (code, signal) => {
    exit = { code, signal };
  });

  // Until stop() runs, the broker must not outlive an attached parent.
  let watchdog: ChildProcess | undefined;
  const onParentExit = () => {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
  };
  if (!detached) {
    process.on('exit', onParentExit);
    watchdog = spawnWatchdog(process.pid, pid);
  }

  const state: BrokerState = {
    pid,
    plaintext: `${HOST}:${plaintextPort}`,
    saslPlaintext: `${HOST}:${saslPort}`,
    saslSsl:
      tls && sslPort !== undefined ? { bootstrap: `${HOST}:${sslPort}`, caPemPath: tls.caPemPath } : null,
    users,
    logFile: files.logFile,
    startedAt: new Date(startedAt).toISOString(),
  };
  await writeState(files, state);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await terminate(pid, log, detached ? undefined : child);
      process.off('exit', onParentExit);
      if (watchdog?.pid !== undefined && watchdog.exitCode === null) {
        try {
          watchdog.kill('SIGTERM');
        } catch {}
      }
      await clearState(files);
    })();
    return stopping;
  };

  log(`broker starting (pid ${pid}), log: ${files.logFile}`);
  const deadline = startedAt + startTimeoutMs;
  const serving = await waitUntilServing(
    probeTargets(state, tls?.caPem),
    () => exit !== undefined || Date.now() > deadline,
    (pending) => log(`still waiting for ${pending.join(', ')}`),
  );
  if (!serving) {
    const exited = exit;
    // Read before stopping: shutdown lines would otherwise bury why a start timed out.
    const excerpt = await logExcerpt(files.logFile, logOffset);
    await stop();
    if (exited) {
      throw new LocalKafkaError(
        'EXITED_DURING_START',
        `the broker exited during start (${exited.signal ?? `exit code ${exited.code}`}). ` +
          `The log below says why; the full log is ${files.logFile}.\n${excerpt}`,
      );
    }
    throw new LocalKafkaError(
      'START_TIMEOUT',
      `the broker did not serve metadata on every listener within ${startTimeoutMs / 1000} s and was stopped. ` +
        `Check ${files.logFile}; a slow or overloaded machine may need a longer startTimeoutMs ` +
        `(--start-timeout-s).\n${excerpt}`,
    );
  }
  log(`broker ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);

  return {
    plaintext: state.plaintext,
    saslPlaintext: state.saslPlaintext,
    saslSsl: state.saslSsl && tls ? { ...state.saslSsl, caPem: tls.caPem } : null,
    users,
    pid,
    logFile: files.logFile,
    stop,
  };
}
