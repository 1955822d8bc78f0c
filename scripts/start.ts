/**
 * `npm start`: runs and supervises the two processes the Procfile names, broker-worker and
 * gateway, for hosts without another supervisor.
 *
 * - SIGTERM or SIGINT stops the whole tree: the gateway first (it drains its calls, which
 *   still need the worker), then the worker; each gets STOP_GRACE_MS before SIGKILL. A
 *   second signal kills both at once.
 * - A child that dies after it was up is restarted with exponential backoff (the gateway
 *   reconnects to a restarted worker by itself). A child that dies before it ever came up
 *   (bad setting, port in use) stops everything: retrying cannot fix it.
 * - Children hold an IPC channel to this process and stop by themselves when it closes,
 *   so even a SIGKILL of this process leaves no orphans behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../shared/package-root.ts';

const root = packageRoot(import.meta.dirname);
const STOP_GRACE_MS = 20_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;
/** A child up this long after a restart counts as healthy again: its backoff starts over. */
const HEALTHY_AFTER_MS = 60_000;

interface Supervised {
  name: 'broker-worker' | 'gateway';
  entry: string;
  process: ChildProcess | null;
  everReady: boolean;
  readyAt: number;
  crashesInARow: number;
  restartTimer: NodeJS.Timeout | null;
}

const say = (line: string) => process.stderr.write(`[start] ${line}\n`);

const worker: Supervised = child('broker-worker', 'broker-worker/main.ts');
const gateway: Supervised = child('gateway', 'gateway/main.ts');
let stopping = false;

function child(name: Supervised['name'], entry: string): Supervised {
  return { name, entry, process: null, everReady: false, readyAt: 0, crashesInARow: 0, restartTimer: null };
}

/**
 * Compiled (dist/scripts/start.js, what `npm start` runs) the children run compiled too, as
 * plain node; from sources (tests, development) they run under tsx like this file.
 */
const compiled = import.meta.url.endsWith('.js');
/** Node flags per entry, as the Procfile gives them (docs/performance-footprint.md). */
const NODE_FLAGS: Record<string, string[]> = { 'gateway/main.ts': ['--max-semi-space-size=1'] };

function entryArgs(entry: string): string[] {
  const flags = NODE_FLAGS[entry] ?? [];
  return compiled
    ? [...flags, join(root, 'dist', entry.replace(/\.ts$/, '.js'))]
    : [...flags, '--import', 'tsx', entry];
}

function launch(target: Supervised): void {
  target.restartTimer = null;
  const proc = spawn(process.execPath, entryArgs(target.entry), {
    cwd: root,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: process.env,
  });
  target.process = proc;
  proc.on('message', (message) => {
    // The same 'ready' message PM2's wait_ready listens for.
    if (message !== 'ready') return;
    target.everReady = true;
    target.readyAt = Date.now();
  });
  proc.on('exit', (code, signal) => {
    if (target.process === proc) target.process = null;
    if (stopping) return;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!target.everReady) {
      say(`${target.name} exited (${how}) before it was up; stopping everything`);
      void stopAll(code || 1);
      return;
    }
    if (target.readyAt > 0 && Date.now() - target.readyAt > HEALTHY_AFTER_MS) target.crashesInARow = 0;
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** target.crashesInARow);
    target.crashesInARow = Math.min(target.crashesInARow + 1, 20);
    target.readyAt = 0;
    say(`${target.name} exited (${how}); restarting it in ${delay} ms`);
    target.restartTimer = setTimeout(() => launch(target), delay);
  });
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process is gone. */
function stopChild(target: Supervised, grace: number): Promise<void> {
  if (target.restartTimer) clearTimeout(target.restartTimer);
  target.restartTimer = null;
  const proc = target.process;
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      say(`${target.name} did not stop within ${grace} ms; killing it`);
      proc.kill('SIGKILL');
    }, grace);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

async function stopAll(exitCode: number): Promise<void> {
  stopping = true;
  await stopChild(gateway, STOP_GRACE_MS);
  await stopChild(worker, STOP_GRACE_MS);
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      say(`second ${signal}: killing both processes now`);
      for (const target of [gateway, worker]) target.process?.kill('SIGKILL');
      process.exit(1);
    }
    say(`${signal}: stopping the gateway, then the broker worker`);
    void stopAll(0);
  });
}

// npm forwards signals to this process (the script is `exec node ...`, so no shell sits in
// between). Should the parent die without a signal (SIGKILL), stop too instead of
// running on unsupervised.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent && !stopping) {
    say('the parent process is gone; stopping');
    void stopAll(0);
  }
}, 1000).unref();

launch(worker);
launch(gateway);
