import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Database } from './sqlite-driver.ts';

export type SqliteDatabase = BetterSqlite3.Database;

/** Where a component's SQLite file lives: one file per component under DATA_DIR. */
export function sqlitePath(dataDir: string, name: string): string {
  return join(dataDir, `${name}.sqlite`);
}

/**
 * Opens (creating if needed) a SQLite database that several threads and processes may
 * share: WAL lets readers run beside the one writer, and the busy timeout makes a writer
 * wait for another connection's transaction instead of failing with SQLITE_BUSY.
 * `:memory:` opens a private in-memory database (tests).
 */
export function openSqlite(file: string, options: { busyTimeoutMs?: number } = {}): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(join(file, '..'), { recursive: true });
  const db = new Database(file);
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5_000)}`);
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode; only a power cut may lose
  // the last transactions, and it never corrupts the file.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return db;
}
