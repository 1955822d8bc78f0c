/** The real broker worker, announced the way every bench server is. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { announce } from './ready.ts';

// The worker is its own process (as in production); this wrapper only reports its pid.
const root = join(import.meta.dirname, '..', '..');
const worker = spawn(process.execPath, ['--import', 'tsx', join(root, 'broker-worker', 'main.ts')], {
  cwd: root,
  // Readiness is read from the worker's info-level 'listening' line.
  env: { ...process.env, LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = createInterface({ input: worker.stdout });
lines.on('line', (line) => {
  if (line.includes('"broker worker listening"')) announce({ port: 0, workerPid: worker.pid });
});
worker.on('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => worker.kill(signal));
