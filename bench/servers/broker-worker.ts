/**
 * The real broker worker, started as the Procfile's `broker-worker` line starts it (compiled
 * `dist/`, with its Node flags), announced the way every bench server is.
 * BENCH_WORKER_NODE_FLAGS (space-separated) replaces the Procfile's flags, so a bench can
 * compare worker settings on the same stack; "none" runs it with no flags.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { procfileArgs } from '../child.ts';
import { announce } from './ready.ts';

const root = join(import.meta.dirname, '..', '..');
const procfile = await procfileArgs('broker-worker');
const script = procfile.at(-1)!;
const override = process.env.BENCH_WORKER_NODE_FLAGS?.trim();
const flags =
  override === undefined || override === ''
    ? procfile.slice(0, -1)
    : override === 'none'
      ? []
      : override.split(/\s+/);
// The worker is its own process (as in production); this wrapper only reports its pid.
const worker = spawn(process.execPath, [...flags, script], {
  cwd: root,
  // Readiness is read from the worker's info-level 'listening' line.
  env: { ...process.env, LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = createInterface({ input: worker.stdout });
lines.on('line', (line) => {
  if (line.includes('"broker worker listening"')) announce({ port: 0, workerPid: worker.pid, flags });
});
worker.on('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => worker.kill(signal));
