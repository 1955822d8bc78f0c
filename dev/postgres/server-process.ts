/**
 * The postmaster as a process: spawned directly (not through pg_ctl, whose fork would leave a
 * test run no child to watch), stopped with Postgres's own shutdown signals, and found again
 * from `postmaster.pid` by a later command.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOST, SERVER_PATH, type ServerFiles } from './paths.ts';
import type { RunAs } from './user.ts';

export interface ServerSpawn {
  bin: string;
  files: ServerFiles;
  port: number;
  user: RunAs | undefined;
  detached: boolean;
  /** Settings for a server that lives one test run: see SHORT_LIVED_SETTINGS. */
  shortLived: boolean;
}

/**
 * A test run's server: no fsync (a crashed test machine loses nothing anyone needs, and a
 * killed postmaster still loses nothing, as the OS has the writes), room for every test
 * file's pools at once, and little shared memory on a shared two-core machine. Commits stay
 * synchronous: a kill -9 must not lose an acknowledged write.
 */
const SHORT_LIVED_SETTINGS = [
  'fsync=off',
  'full_page_writes=off',
  'max_connections=400',
  'shared_buffers=64MB',
];

export function spawnServer({ bin, files, port, user, detached, shortLived }: ServerSpawn): ChildProcess {
  const settings = [
    `listen_addresses=${HOST}`,
    // TCP only: no socket file in /tmp to collide with another server on the same port number.
    'unix_socket_directories=',
    ...(shortLived ? SHORT_LIVED_SETTINGS : []),
  ];
  // stdout and stderr go straight to the log file, so the server never blocks on a full pipe
  // and keeps logging after a detached start's command is gone.
  const out = openSync(files.logFile, 'a');
  try {
    const child = spawn(
      join(bin, 'postgres'),
      ['-D', files.pgdata, '-p', String(port), ...settings.flatMap((s) => ['-c', s])],
      {
        cwd: files.pgdata,
        stdio: ['ignore', out, out],
        detached,
        env: { PATH: SERVER_PATH, LANG: 'C', TZ: 'UTC' },
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      },
    );
    if (detached) child.unref();
    return child;
  } finally {
    closeSync(out);
  }
}

/**
 * For a server attached to a test run: a tiny shell that outlives a runner killed with
 * SIGKILL (no exit handlers run) and then asks the postmaster for a fast shutdown (SIGINT),
 * so no server is left holding its port. It ends as soon as either process is gone.
 */
export function spawnWatchdog(parentPid: number, serverPid: number): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
    'kill -0 "$1" 2>/dev/null || kill -INT "$2" 2>/dev/null; exit 0';
  const watchdog = spawn(
    '/bin/sh',
    ['-c', script, 'local-postgres-watchdog', String(parentPid), String(serverPid)],
    {
      stdio: 'ignore',
    },
  );
  watchdog.on('error', () => {});
  watchdog.unref();
  return watchdog;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // A zombie (exited, not yet reaped) is gone for every purpose here.
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The running postmaster of a cluster and its port, read from the file Postgres itself keeps. */
export function runningPostmaster(files: ServerFiles): { pid: number; port: number } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(files.pgdata, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  try {
    // A stale pid file's pid may now be another program.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!args.some((arg) => arg.endsWith('/postgres')) || !args.includes(files.pgdata)) return undefined;
  } catch {}
  return { pid, port };
}

async function waitGone(pid: number, ms: number, child?: ChildProcess): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child ? child.exitCode !== null || child.signalCode !== null : !isAlive(pid)) return true;
    await sleep(50);
  }
  return false;
}

/** Fast shutdown (SIGINT: sessions ended, a clean checkpoint), then immediate (SIGQUIT), then SIGKILL. */
export async function terminate(pid: number, child?: ChildProcess, log: (line: string) => void = () => {}) {
  for (const [signal, waitMs] of [
    ['SIGINT', 30_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
      throw error;
    }
    if (await waitGone(pid, waitMs, child)) return;
    log(`postgres (pid ${pid}) still running ${waitMs / 1000} s after ${signal}`);
  }
}
