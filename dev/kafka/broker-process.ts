import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalKafkaError, quoteOutput, tailLines } from './errors.ts';
import { execTool } from './exec.ts';
import type { BrokerFiles } from './files.ts';
import { isAlive } from './state.ts';

/** Modest on purpose: dev and CI machines have two cores and run the gateway and tests too. */
const JVM_OPTIONS = [
  '-Xms256m',
  '-Xmx512m',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-Djava.awt.headless=true',
];

/**
 * For a JVM that lives seconds to minutes (the format tool, a test run's broker): the C1
 * compiler only. C2 would spend more CPU compiling in the background (about half of a test
 * broker's CPU, measured) than its faster code wins back in that time; a broker that serves
 * for hours or a benchmark keeps both tiers.
 */
const SHORT_LIVED_OPTIONS = ['-XX:TieredStopAtLevel=1'];

function jvmArgs(libs: string, files: BrokerFiles, shortLived: boolean): string[] {
  return [
    ...JVM_OPTIONS,
    ...(shortLived ? SHORT_LIVED_OPTIONS : []),
    `-Dlog4j2.configurationFile=file:${files.log4jProperties}`,
    '-cp',
    // The JVM expands `dir/*` itself; no shell is involved, so no quoting issues with the path.
    join(libs, '*'),
  ];
}

/** Writes meta.properties into a fresh log dir; the broker refuses to start without it. */
export async function formatLogDir(
  java: string,
  libs: string,
  files: BrokerFiles,
  clusterId: string,
): Promise<void> {
  const result = await execTool(
    java,
    [
      ...jvmArgs(libs, files, true),
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      files.serverProperties,
    ],
    { timeoutMs: 120_000 },
  );
  if ('missing' in result || result.code !== 0) {
    const output = 'missing' in result ? `${java} not found` : tailLines(result.output, 30);
    throw new LocalKafkaError(
      'FORMAT_FAILED',
      `Formatting the KRaft log dir ${files.logDir} failed. If the data dir holds an older broker, ` +
        `delete ${files.dataDir} and start again.\n${quoteOutput('StorageTool output', output)}`,
    );
  }
}

export interface SpawnOptions {
  java: string;
  libs: string;
  files: BrokerFiles;
  /** Detached brokers outlive the starting process (the CLI); attached ones die with it (tests). */
  detached: boolean;
  /** See SHORT_LIVED_OPTIONS. */
  shortLived: boolean;
}

export function spawnBroker({ java, libs, files, detached, shortLived }: SpawnOptions): ChildProcess {
  // stdout and stderr go straight to the log file so the broker never blocks on a full pipe
  // and keeps logging after the starting process is gone.
  const out = openSync(files.logFile, 'a');
  try {
    const child = spawn(java, [...jvmArgs(libs, files, shortLived), 'kafka.Kafka', files.serverProperties], {
      cwd: files.dataDir,
      stdio: ['ignore', out, out],
      detached,
    });
    if (detached) child.unref();
    return child;
  } finally {
    closeSync(out);
  }
}

/**
 * For attached brokers: a tiny shell that outlives a parent killed with SIGKILL (which runs no
 * exit handlers) and then sends the broker SIGTERM, so no JVM is left holding ports and memory.
 * It exits on its own as soon as either process is gone.
 */
export function spawnWatchdog(parentPid: number, brokerPid: number): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
    'kill -0 "$1" 2>/dev/null || kill -TERM "$2" 2>/dev/null; exit 0';
  const watchdog = spawn(
    '/bin/sh',
    ['-c', script, 'local-kafka-watchdog', String(parentPid), String(brokerPid)],
    {
      stdio: 'ignore',
    },
  );
  watchdog.on('error', () => {});
  watchdog.unref();
  return watchdog;
}

/** Resolves once the process is gone; for our own child the 'exit' event also reaps the zombie. */
export async function waitForExit(pid: number, timeoutMs: number, child?: ChildProcess): Promise<boolean> {
  if (child ? child.exitCode !== null || child.signalCode !== null : !isAlive(pid)) return true;
  // Whichever ends first, the timeout or the wait, aborting stops the other.
  const stop = new AbortController();
  const timedOut = sleep(timeoutMs, false, { signal: stop.signal }).catch(() => false);
  const gone = child ? exitOf(child, stop.signal) : pidGone(pid, stop.signal);
  try {
    return await Promise.race([gone, timedOut]);
  } finally {
    stop.abort();
  }
}

function exitOf(child: ChildProcess, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const onExit = () => resolve(true);
    child.once('exit', onExit);
    signal.addEventListener('abort', () => child.off('exit', onExit), { once: true });
  });
}

/** Another process's pid gives no event: look every 100 ms. */
async function pidGone(pid: number, signal: AbortSignal): Promise<boolean> {
  while (!signal.aborted) {
    await sleep(100, undefined, { signal }).catch(() => {});
    if (!isAlive(pid)) return true;
  }
  return false;
}

export const GRACEFUL_STOP_MS = 30_000;

/**
 * SIGTERM lets Kafka flush and close its logs, which keeps the next start fast (no log recovery).
 * SIGKILL only when it has not finished after `graceMs`.
 */
export async function terminate(
  pid: number,
  log: (line: string) => void,
  child?: ChildProcess,
  graceMs = GRACEFUL_STOP_MS,
): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw error;
  }
  if (await waitForExit(pid, graceMs, child)) return;
  log(`broker (pid ${pid}) did not stop within ${graceMs / 1000} s of SIGTERM; sending SIGKILL`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw error;
  }
  await waitForExit(pid, 10_000, child);
}
