import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const benchRoot = join(import.meta.dirname, '..');

export interface BenchChild {
  process: ChildProcess;
  info: Record<string, unknown> & { port: number; pid: number };
  stop(): Promise<void>;
}

/** Starts a TypeScript entry as its own process and waits for its `announce` line. */
export function startChild(entry: string, env: Record<string, string> = {}): Promise<BenchChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: benchRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    child.once('exit', (code) => reject(new Error(`${entry} exited (${code}) before it was ready`)));
    lines.on('line', (line) => {
      if (!line.startsWith('{"ready":true')) return;
      child.removeAllListeners('exit');
      resolve({
        process: child,
        info: JSON.parse(line),
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      });
    });
  });
}

/** Resident set size of another process, from /proc, in MiB. */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * The Procfile's command for `name` without its `node` (`[flags] script`), so a bench runs
 * what production runs, flags included.
 */
export async function procfileArgs(name: string): Promise<string[]> {
  const text = await readFile(join(benchRoot, 'Procfile'), 'utf8');
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`Procfile has no ${name} line`);
  const [node, ...args] = line
    .slice(name.length + 1)
    .trim()
    .split(/\s+/);
  if (node !== 'node') throw new Error(`Procfile ${name}: expected "node ...", got "${node}"`);
  return args;
}
