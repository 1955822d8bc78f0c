/**
 * `npm run backup -- --to DIR`: an online copy of DATA_DIR's SQLite stores while gateways
 * and CLIs keep writing. SQLite's backup API copies pages under a read transaction, so each
 * copy is one consistent snapshot of its store (WAL lets writers go on meanwhile).
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from '../store/sqlite-driver.ts';
import {
  type BackedUpFile,
  type BackupManifest,
  MANIFEST_FORMAT,
  MANIFEST_NAME,
  sha256File,
  storesIn,
} from './manifest.ts';

/** The whole remaining database in the next step (the most better-sqlite3 takes). */
const ALL_PAGES = 0x7fffffff;

export interface BackupOptions {
  dataDir: string;
  to: string;
  log?: (line: string) => void;
}

/**
 * Copies one store. Page by page, a write by another connection between steps would make
 * SQLite start the copy over, without end under a steady writer; after the first step
 * (which only learns the size) the rest goes in one step, one read transaction.
 */
async function copyStore(source: string, target: string): Promise<{ pages: number; pageSize: number }> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const { totalPages } = await db.backup(target, { progress: () => ALL_PAGES });
    return { pages: totalPages, pageSize: db.pragma('page_size', { simple: true }) as number };
  } finally {
    db.close();
  }
}

/**
 * Makes the copy one self-contained file (rollback journal instead of WAL, so no -wal or
 * -shm beside it) and checks it; a gateway started on a restored file turns WAL on again.
 */
function settleCopy(path: string): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy of ${path} fails SQLite's quick_check: ${String(check)}`);
  } finally {
    db.close();
  }
}

export async function backupDataDir({ dataDir, to, log = () => {} }: BackupOptions): Promise<BackupManifest> {
  const source = resolve(dataDir);
  const target = resolve(to);
  const stores = await storesIn(source);
  if (stores.length === 0)
    throw new Error(`no SQLite stores (*.sqlite) in DATA_DIR (${source}): is DATA_DIR set as the gateway's?`);
  if (existsSync(join(target, MANIFEST_NAME)))
    throw new Error(`${target} already holds a backup; give each backup its own directory`);
  for (const { name } of stores) {
    if (existsSync(join(target, name)))
      throw new Error(`${join(target, name)} already exists; nothing was copied`);
  }
  await mkdir(target, { recursive: true });
  const startedAt = new Date().toISOString();
  const files: BackedUpFile[] = [];
  for (const { name, holds } of stores) {
    const partial = join(target, `${name}.partial`);
    try {
      const { pages, pageSize } = await copyStore(join(source, name), partial);
      settleCopy(partial);
      await rename(partial, join(target, name));
      const file = { name, holds, bytes: (await stat(join(target, name))).size, pages, pageSize };
      files.push({ ...file, sha256: await sha256File(join(target, name)), integrity: 'ok' });
      log(`${name}: ${pages} pages, ${formatBytes(file.bytes)}, quick_check ok`);
    } finally {
      await rm(partial, { force: true });
    }
  }
  const manifest: BackupManifest = {
    format: MANIFEST_FORMAT,
    version: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    dataDir: source,
    host: hostname(),
    sqliteVersion: sqliteVersion(),
    files,
  };
  // Written last and renamed into place: a directory with a manifest holds a whole backup.
  await writeFile(join(target, `${MANIFEST_NAME}.partial`), `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(join(target, `${MANIFEST_NAME}.partial`), join(target, MANIFEST_NAME));
  return manifest;
}

function sqliteVersion(): string {
  const db = new Database(':memory:');
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
