/**
 * `npm start`: the broker-worker and the gateway as two processes, as the Procfile runs them.
 * If either exits, the other is stopped too, so a supervisor sees one failure and restarts both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const children: ChildProcess[] = [];
let stopping = false;

function launch(name: string, entry: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? `code ${code}`}); stopping the rest`);
      stopAll(code ?? 1);
    }
  });
  children.push(child);
  return child;
}

function stopAll(exitCode: number): void {
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  const live = children.filter((child) => child.exitCode === null && child.signalCode === null);
  if (live.length === 0) process.exit(exitCode);
  let remaining = live.length;
  for (const child of live) {
    child.once('exit', () => {
      remaining -= 1;
      if (remaining === 0) process.exit(exitCode);
    });
  }
  setTimeout(() => process.exit(exitCode), 30_000).unref();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopAll(0));

launch('broker-worker', 'broker-worker/main.ts');
launch('gateway', 'gateway/main.ts');
