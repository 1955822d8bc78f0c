/**
 * Command-line tools from Debian packages that the deploy tests run (promtool, systemd-analyze, haproxy),
 * installed by the tests themselves: CI is a fresh Debian machine where neither is present.
 *
 * Two ways, one per kind of tool (docs/decisions/0603-debian-tools-for-deploy-tests.md):
 * - `extract`: `apt-get download` the .deb and unpack only the binary into .cache/debian/.
 *   For a self-contained binary (promtool is a Go program needing only libc): installing
 *   the `prometheus` package instead would add a server, its web assets, a system user and
 *   ten JavaScript packages to the machine, to run one file.
 *   A binary that loads a few libraries a minimal image lacks (haproxy: lua, opentracing)
 *   gets those packages unpacked beside it and runs with LD_LIBRARY_PATH (decision 1001):
 *   installing haproxy would also start a system HAProxy that no test stops.
 * - `install`: `apt-get install -y --no-install-recommends`. For a binary that needs the
 *   package's own shared libraries and their dependencies (systemd-analyze loads
 *   libsystemd-shared, which needs libseccomp, libkmod, libcryptsetup...).
 *
 * Package lists missing (a fresh image) are fetched once with `apt-get update`. A tool that
 * cannot be had (not Debian, not root for an install, no registry) gives a reason to skip
 * with, never a silent pass.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { withDirLock } from './dir-lock.ts';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const cacheDir = join(root, '.cache', 'debian');
// No debconf question may wait for a terminal that a test run does not have.
const LONG = {
  maxBuffer: 16 * 1024 * 1024,
  timeout: 10 * 60_000,
  env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
};

export interface DebianTool {
  /** The package that ships it. */
  package: string;
  /** The binary's name (also its path under usr/bin/ in the package, or `dir`). */
  binary: string;
  how: 'extract' | 'install';
  /** Where the package keeps the binary; default usr/bin (haproxy is in usr/sbin). */
  dir?: 'usr/bin' | 'usr/sbin';
  /**
   * For `extract`: packages whose shared libraries the binary loads and a machine may lack
   * (haproxy needs liblua5.3-0 and libopentracing-c-wrapper0). They are unpacked beside it,
   * and `env` carries the LD_LIBRARY_PATH that finds them, so nothing lands in /usr.
   */
  libraries?: string[];
}

export type Found =
  | { path: string; env: Record<string, string>; skip?: undefined }
  | { path?: undefined; env?: undefined; skip: string };

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binary);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const messageOf = (error: unknown) =>
  `${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`.slice(0, 400);

/** Runs an apt-get command; on a machine whose package lists were never fetched, fetches them and tries again. */
async function aptGet(args: string[], cwd: string): Promise<void> {
  try {
    await exec('apt-get', args, { ...LONG, cwd });
  } catch (error) {
    if (!/Unable to locate package|has no installation candidate|Failed to fetch/.test(messageOf(error)))
      throw error;
    await exec('apt-get', ['update', '-qq'], LONG);
    await exec('apt-get', args, { ...LONG, cwd });
  }
}

async function extract(tool: DebianTool, target: string): Promise<void> {
  // Unpacked beside its final place: a rename from /tmp fails when /tmp is another file
  // system (a tmpfs), and the tool would then be skipped for no good reason.
  await mkdir(cacheDir, { recursive: true });
  const work = await mkdtemp(join(cacheDir, `.${tool.package}-`));
  try {
    // apt drops root to `_apt` for downloads: let it write here (where it cannot reach the
    // folder, it warns and downloads as root, which works too).
    await chmod(work, 0o777);
    await aptGet(['download', '-q', tool.package, ...(tool.libraries ?? [])], work);
    const debs = (await readdir(work)).filter((name) => name.endsWith('.deb'));
    if (debs.length === 0) throw new Error(`apt-get download ${tool.package} left no .deb`);
    const unpacked = join(work, 'root');
    await mkdir(unpacked);
    for (const deb of debs) await exec('dpkg-deb', ['-x', join(work, deb), unpacked], LONG);
    const dir = tool.dir ?? 'usr/bin';
    const binary = join(unpacked, dir, tool.binary);
    if (!existsSync(binary)) throw new Error(`${tool.package}'s package has no ${dir}/${tool.binary}`);
    // The libraries first: the binary's presence is what says the tool is installed.
    if (tool.libraries?.length) await rename(join(unpacked, 'usr', 'lib', 'x86_64-linux-gnu'), libDir(tool));
    // Renamed into place only when whole: a run stopped mid-way leaves no half-written tool.
    await rename(binary, target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function libDir(tool: DebianTool): string {
  return join(cacheDir, `${tool.binary}.lib`);
}

/** The path and the environment to run it with: an extracted binary finds its libraries. */
function found(tool: DebianTool, path: string): Found {
  const libs = libDir(tool);
  return path.startsWith(cacheDir) && existsSync(libs)
    ? { path, env: { LD_LIBRARY_PATH: libs } }
    : { path, env: {} };
}

function located(tool: DebianTool, cached: string): string | undefined {
  const dir = tool.dir === 'usr/sbin' ? ['/usr/sbin', '/sbin'] : [];
  const system = dir.map((d) => join(d, tool.binary)).find((candidate) => existsSync(candidate));
  return onPath(tool.binary) ?? system ?? (existsSync(cached) ? cached : undefined);
}

/** The tool's path, installing it the first time; or why it cannot be had. */
export async function debianTool(tool: DebianTool): Promise<Found> {
  const cached = join(cacheDir, tool.binary);
  const present = located(tool, cached);
  if (present) return found(tool, present);
  if (!onPath('apt-get') || !onPath('dpkg-deb')) {
    return { skip: `${tool.binary} is not installed and this is not a Debian machine (no apt-get)` };
  }
  if (tool.how === 'install' && process.getuid?.() !== 0) {
    return { skip: `${tool.binary} is not installed, and installing ${tool.package} needs root` };
  }
  try {
    // One apt operation at a time across concurrent test files: apt's own locks fail rather than wait.
    await withDirLock(join(root, '.cache', 'debian.lock'), async () => {
      // Another test file may have installed it while this one waited for the lock.
      if (located(tool, cached)) return;
      if (tool.how === 'extract') await extract(tool, cached);
      else await aptGet(['install', '-y', '-q', '--no-install-recommends', tool.package], root);
    });
  } catch (error) {
    return {
      skip: `${tool.binary} could not be installed from Debian's ${tool.package}: ${messageOf(error)}`,
    };
  }
  const path = located(tool, cached);
  return path ? found(tool, path) : { skip: `${tool.package} installed, yet no ${tool.binary} on PATH` };
}
