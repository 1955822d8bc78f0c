/**
 * Runs a real broker-worker process (compiled `broker-worker/main.ts`) for a test, listening on a
 * private unix socket, and gives back a BrokerWorkerClient connected to it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerWorkerClient } from '../../../gateway/broker-client/client.ts';
import { parseEndpoint } from '../../../shared/ipc/endpoint.ts';
import { compiledEntry } from '../../support/compiled.ts';

const root = join(import.meta.dirname, '..', '..', '..');

export interface WorkerProcess {
  /** `unix:/tmp/.../w.sock` */
  address: string;
  child: ChildProcess;
  /** Every stdout/stderr line so far (pino JSON and anything else). */
  lines: string[];
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/** A fresh socket address in its own temporary directory (short enough for sockaddr_un). */
export function freshSocketAddress(): string {
  return `unix:${join(mkdtempSync(join(tmpdir(), 'bw-')), 'w.sock')}`;
}

/** The environment without any BROKER_* / DATA_DIR the test runner itself may have. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith('BROKER_') || name === 'DATA_DIR') continue;
    env[name] = value;
  }
  return env;
}

export async function startWorker(
  env: Record<string, string>,
  options: { address?: string; timeoutMs?: number } = {},
): Promise<WorkerProcess> {
  const address = options.address ?? freshSocketAddress();
  const child = spawn(process.execPath, [compiledEntry('broker-worker/main.ts')], {
    cwd: root,
    env: { ...cleanEnv(), LOG_LEVEL: 'info', BROKER_WORKER_LISTEN: address, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`broker worker did not start:\n${lines.join('\n')}`)),
      options.timeoutMs ?? 20_000,
    );
    const onLine = (line: string) => {
      lines.push(line);
      if (line.includes('"broker worker listening"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        rest += chunk;
        const parts = rest.split('\n');
        rest = parts.pop() ?? '';
        for (const part of parts) onLine(part);
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker worker exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
  await ready;
  return {
    address,
    child,
    lines,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs the worker to completion (for start-up failures): exit code and output. */
export async function runWorkerToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [compiledEntry('broker-worker/main.ts')], {
    cwd: root,
    env: { ...cleanEnv(), BROKER_WORKER_LISTEN: freshSocketAddress(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

export function clientFor(...addresses: string[]): BrokerWorkerClient {
  return new BrokerWorkerClient({ workers: addresses.map(parseEndpoint) });
}

export interface ConnectedWorker {
  worker: WorkerProcess;
  client: BrokerWorkerClient;
  /** Closes the client, then stops the worker. */
  close(): Promise<void>;
}

/** A worker process and a client connected to it: the set-up most worker tests share. */
export async function startConnectedWorker(env: Record<string, string>): Promise<ConnectedWorker> {
  const worker = await startWorker(env);
  const client = clientFor(worker.address);
  return {
    worker,
    client,
    async close() {
      await client.close();
      await worker.stop();
    },
  };
}
