/**
 * `npm run backup -- restore --from DIR`: puts a backup's stores into a stopped gateway's
 * DATA_DIR. Every file is checked against the manifest, and every target checked, before
 * the first one is replaced, so a refusal changes nothing.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Database } from '../store/sqlite-driver.ts';
import { type BackupManifest, readManifest, sha256File } from './manifest.ts';

export interface RestoreOptions {
  from: string;
  dataDir: string;
  /** Replace stores that already exist in DATA_DIR (never one that is open). */
  force?: boolean;
  log?: (line: string) => void;
}

export class RestoreRefused extends Error {}

/** The backup's files are all there and unchanged since the manifest was written. */
async function checkBackup(from: string, manifest: BackupManifest): Promise<void> {
  for (const file of manifest.files) {
    if (/[/\\]/.test(file.name) || !file.name.endsWith('.sqlite'))
      throw new RestoreRefused(`the manifest names "${file.name}", which is not a store file name`);
    const path = join(from, file.name);
    if (!existsSync(path)) throw new RestoreRefused(`${path} is missing: the backup is incomplete`);
    if ((await stat(path)).size !== file.bytes || (await sha256File(path)) !== file.sha256)
      throw new RestoreRefused(`${path} differs from the manifest (size or sha256): the backup is damaged`);
  }
}

/**
 * Whether some connection (a gateway, a broker worker's neighbour, a CLI) has the store
 * open. The gateway keeps its stores in WAL mode, and leaving WAL needs the only connection:
 * SQLite refuses with SQLITE_BUSY while another is open. The probe changes the journal
 * mode of a file that is about to be replaced anyway.
 */
function inUse(path: string): boolean {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('journal_mode = DELETE');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw error;
  } finally {
    db.close();
  }
}

async function checkTargets(dataDir: string, manifest: BackupManifest, force: boolean): Promise<void> {
  const present = manifest.files.map((file) => join(dataDir, file.name)).filter((path) => existsSync(path));
  if (present.length === 0) return;
  if (!force)
    throw new RestoreRefused(
      `${present.join(' and ')} already exist${present.length === 1 ? 's' : ''}; restoring would replace ${present.length === 1 ? 'it' : 'them'}. Run again with --force to replace, after stopping the gateway`,
    );
  const open = present.filter(inUse);
  if (open.length > 0)
    throw new RestoreRefused(
      `${open.join(' and ')} ${open.length === 1 ? 'is' : 'are'} in use: stop every gateway and CLI using DATA_DIR (${dataDir}) first`,
    );
}

/** Copies under a temporary name, drops the old file's WAL (it would replay onto the new one), renames. */
async function place(from: string, dataDir: string, name: string): Promise<void> {
  const target = join(dataDir, name);
  const temporary = `${target}.restoring`;
  try {
    await copyFile(join(from, name), temporary);
    for (const leftover of ['-wal', '-shm', '-journal']) await rm(`${target}${leftover}`, { force: true });
    await rename(temporary, target);
  } finally {
    await rm(temporary, { force: true });
  }
}

export async function restoreDataDir({
  from,
  dataDir,
  force = false,
  log = () => {},
}: RestoreOptions): Promise<BackupManifest> {
  const source = resolve(from);
  const target = resolve(dataDir);
  const manifest = await readManifest(source);
  await checkBackup(source, manifest);
  await checkTargets(target, manifest, force);
  await mkdir(target, { recursive: true });
  for (const file of manifest.files) {
    await place(source, target, file.name);
    log(`${file.name}: restored into ${target}`);
  }
  return manifest;
}
