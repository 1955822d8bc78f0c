/**
 * Runs `npm run keys` / `npm run users` / `npm run memory` / `npm run kafka` as an operator would: a child process with its own
 * environment and standard input, its exit code and both outputs captured: the bin/
 * launcher over the compiled dist/, as shipped (test/support/compiled.ts says why).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const LAUNCHER = {
  keys: 'bin/keys.mjs',
  users: 'bin/users.mjs',
  memory: 'bin/memory.mjs',
  kafka: 'bin/kafka.mjs',
};

export function runCli(
  tool: keyof typeof LAUNCHER,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CliResult> {
  const argv = [LAUNCHER[tool], ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: root,
      // DATABASE_URL is cleared unless given, so a developer's own database is never touched.
      env: { ...process.env, DATABASE_URL: '', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    // A command that never reads its input (a refusal) may exit before the write lands.
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** Splits a POSIX shell command line into words: whitespace separates, quotes group. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    words.push(match[1]?.replace(/\\(.)/g, '$1') ?? match[2] ?? (match[3] as string));
  }
  return words;
}
