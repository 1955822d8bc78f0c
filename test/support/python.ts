/**
 * A cached Python virtual environment for tests that drive Python clients (httpx, the Python
 * MCP SDK). It lives in `.cache/python-venv` (git-ignored) and is (re)filled with the pinned
 * packages of `python-requirements.txt` whenever that file's hash changes, so a warm run costs
 * one stat and one file read. Concurrent test files share it through a lock directory.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withDirLock } from './dir-lock.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const requirementsPath = join(import.meta.dirname, 'python-requirements.txt');
const venvDir = join(root, '.cache', 'python-venv');
const venvPython = join(venvDir, 'bin', 'python');
const stampPath = join(venvDir, '.requirements-sha256');
const lockDir = join(root, '.cache', 'python-venv.lock');
/** The interpreter the environment is made from; PYTHON overrides the one on PATH. */
const basePython = process.env.PYTHON ?? 'python3';
const LONG = { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 };

async function requirementsHash(): Promise<string> {
  return createHash('sha256')
    .update(await readFile(requirementsPath))
    .digest('hex');
}

async function isCurrent(hash: string): Promise<boolean> {
  if (!existsSync(venvPython)) return false;
  const stamp = await readFile(stampPath, 'utf8').catch(() => '');
  return stamp.trim() === hash;
}

/**
 * Debian splits `venv`/`ensurepip` into the python3-venv package. It is installed only when
 * the module is missing and this process runs as root (a CI container); otherwise the error
 * says what to install.
 */
async function ensureVenvModule(): Promise<void> {
  const probe = () => run(basePython, ['-c', 'import venv, ensurepip'], LONG);
  try {
    await probe();
    return;
  } catch {
    // fall through: try to install it
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${basePython} has no working venv module; install it (Debian/Ubuntu: sudo apt-get install python3-venv) and rerun`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update'], { ...LONG, env });
  await run('apt-get', ['install', '-y', '--no-install-recommends', 'python3-venv'], { ...LONG, env });
  await probe();
}

async function build(hash: string): Promise<void> {
  if (!existsSync(venvPython)) {
    await ensureVenvModule();
    await rm(venvDir, { recursive: true, force: true });
    await run(basePython, ['-m', 'venv', venvDir], LONG);
  }
  await rm(stampPath, { force: true });
  await run(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirementsPath],
    LONG,
  );
  await writeFile(stampPath, `${hash}\n`);
}

let ready: Promise<string> | undefined;

/** The path of the cached environment's python, with every pinned requirement installed. */
export function testPython(): Promise<string> {
  ready ??= (async () => {
    const hash = await requirementsHash();
    if (await isCurrent(hash)) return venvPython;
    await withDirLock(lockDir, async () => {
      if (!(await isCurrent(hash))) await build(hash);
    });
    return venvPython;
  })();
  return ready;
}

/** Runs a Python script in the cached environment; resolves with stdout. */
export async function runPython(
  script: string,
  args: string[] = [],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  const python = await testPython();
  const { stdout } = await run(python, ['-c', script, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: options.timeoutMs ?? 120_000,
    env: { ...process.env, ...options.env },
  });
  return stdout;
}
