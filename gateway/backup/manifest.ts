/**
 * What a backup directory holds: the SQLite stores of one DATA_DIR, each a self-contained
 * file, and `backup-manifest.json` describing them. The manifest is written last, so a
 * directory with one is a finished backup, and restore checks every file against it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const MANIFEST_NAME = 'backup-manifest.json';
export const MANIFEST_FORMAT = 'mcp-gateway-sqlite-backup';

export interface BackedUpFile {
  /** The file's name in DATA_DIR and in the backup directory. */
  name: string;
  /** What the gateway keeps in it. */
  holds: string;
  bytes: number;
  sha256: string;
  pages: number;
  pageSize: number;
  /** Whether SQLite's quick_check passed on the copy. */
  integrity: 'ok';
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  version: 1;
  startedAt: string;
  finishedAt: string;
  /** DATA_DIR as an absolute path at backup time. */
  dataDir: string;
  host: string;
  sqliteVersion: string;
  files: BackedUpFile[];
}

/** The stores the gateway writes under DATA_DIR, in the order they are described. */
const KNOWN_STORES: Record<string, string> = {
  'api-keys.sqlite': 'state store: accounts, sessions, API key hashes, limits and quota counts',
  'memory.sqlite': 'memory namespace: memories, their keyword index and vectors',
};

/**
 * The SQLite databases in DATA_DIR: the known stores plus any other `*.sqlite` there (a
 * store added later is backed up without a change here).
 */
export async function storesIn(dataDir: string): Promise<{ name: string; holds: string }[]> {
  if (!existsSync(dataDir)) return [];
  const names = (await readdir(dataDir)).filter((name) => name.endsWith('.sqlite'));
  const known = Object.keys(KNOWN_STORES).filter((name) => names.includes(name));
  const others = names.filter((name) => !(name in KNOWN_STORES)).sort();
  return [...known, ...others].map((name) => ({ name, holds: KNOWN_STORES[name] ?? 'SQLite database' }));
}

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

export async function readManifest(dir: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST_NAME), 'utf8')) as BackupManifest;
  } catch (error) {
    throw new Error(
      `${join(dir, MANIFEST_NAME)} cannot be read (${(error as Error).message}): not a finished backup made by npm run backup`,
    );
  }
  if (manifest.format !== MANIFEST_FORMAT || manifest.version !== 1 || !Array.isArray(manifest.files))
    throw new Error(`${join(dir, MANIFEST_NAME)} is not a backup manifest this version understands`);
  return manifest;
}
