/**
 * One KRaft node (broker and controller in one JVM) of a local cluster: writes its config,
 * formats its log dir on first use, spawns it and records its pid, state and ports. Waiting
 * until it serves is the caller's job (local-kafka.ts), since a cluster's nodes only serve
 * once a majority of them runs.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatLogDir, spawnBroker, spawnWatchdog, terminate } from './broker-process.ts';
import {
  type BrokerPorts,
  HOST,
  renderLog4j2Properties,
  renderServerProperties,
  type Voter,
} from './config.ts';
import { LocalKafkaError, quoteOutput, tailLines } from './errors.ts';
import type { BrokerFiles } from './files.ts';
import { type BrokerState, clearState, writePorts, writeState } from './state.ts';
import type { TlsMaterial } from './tls.ts';

export interface NodeLaunch {
  java: string;
  libs: string;
  files: BrokerFiles;
  nodeId: number;
  ports: BrokerPorts;
  voters: Voter[];
  users: Record<string, string>;
  initialRebalanceDelayMs: number;
  tls: TlsMaterial | null;
  /** Used only when the log dir is fresh. */
  clusterId: string;
  detached: boolean;
  shortLived: boolean;
  log: (line: string) => void;
}

export interface LaunchedNode {
  nodeId: number;
  pid: number;
  state: BrokerState;
  files: BrokerFiles;
  /** How the process ended, once it has. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** What this start wrote to the log, for an error message. */
  excerpt(): Promise<string>;
  /** Graceful (SIGTERM, SIGKILL after 30 s), idempotent. */
  stop(): Promise<void>;
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

export async function launchNode(launch: NodeLaunch): Promise<LaunchedNode> {
  const { files, ports, tls, log, detached } = launch;
  await mkdir(files.dataDir, { recursive: true });
  await clearState(files);
  await writeFile(
    files.serverProperties,
    renderServerProperties({
      ports,
      nodeId: launch.nodeId,
      voters: launch.voters,
      logDir: files.logDir,
      users: launch.users,
      initialRebalanceDelayMs: launch.initialRebalanceDelayMs,
      keystore: tls ? { path: tls.keystorePath, password: tls.keystorePassword } : null,
    }),
    { mode: 0o600 },
  );
  await writeFile(files.log4jProperties, renderLog4j2Properties());
  await writePorts(files, ports);

  if (!existsSync(join(files.logDir, 'meta.properties'))) {
    log(`formatting a fresh KRaft log dir in ${files.logDir}`);
    await formatLogDir(launch.java, launch.libs, files, launch.clusterId);
  }

  const logOffset = await fileSize(files.logFile);
  await writeFile(files.logFile, `--- local-kafka start ${new Date().toISOString()} ---\n`, { flag: 'a' });
  const child = spawnBroker({
    java: launch.java,
    libs: launch.libs,
    files,
    detached,
    shortLived: launch.shortLived,
  });
  const pid = await new Promise<number>((resolvePid, reject) => {
    child.once('spawn', () => resolvePid(child.pid!));
    child.once('error', (error) =>
      reject(new LocalKafkaError('JAVA_MISSING', `could not run ${launch.java}: ${error.message}`)),
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
    nodeId: launch.nodeId,
    pid,
    plaintext: `${HOST}:${ports.plaintext}`,
    saslPlaintext: `${HOST}:${ports.saslPlaintext}`,
    saslSsl:
      tls && ports.saslSsl !== null
        ? { bootstrap: `${HOST}:${ports.saslSsl}`, caPemPath: tls.caPemPath }
        : null,
    users: launch.users,
    logFile: files.logFile,
    startedAt: new Date().toISOString(),
  };
  await writeState(files, state);
  log(`broker ${launch.nodeId} starting (pid ${pid}), log: ${files.logFile}`);

  let stopping: Promise<void> | undefined;
  return {
    nodeId: launch.nodeId,
    pid,
    state,
    files,
    exit: () => exit,
    excerpt: () => logExcerpt(files.logFile, logOffset),
    stop() {
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
    },
  };
}
