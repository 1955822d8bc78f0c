/**
 * Memory rows read as arrays. On Node 20, better-sqlite3 builds a row object by setting
 * each column under its name, making the name an internalized string again for every
 * column of every row; an array skips that, and the literal below gives every row one
 * shape. A point read (memory_get) spent about 40% of its time in the row read with
 * `SELECT *`; record 0903 has the figures.
 */
import type Database from 'better-sqlite3';
import type { MemoryRow } from './common.ts';

/** The store's statement cache (`SqliteMemoryStore.st`), as its parts are handed it. */
export type Statements = (sql: string) => Database.Statement<unknown[]>;

/** The columns rowOf reads, in its order, of the table aliased `m`. */
export const ROW_COLUMNS =
  'm.id, m.public_id, m.namespace, m.key, m.content, m.content_hash, m.tags, m.metadata, m.pinned, m.created_at, m.updated_at, m.occurred_at, m.expires_at, m.embedding_status, m.superseded_by';

export function rowOf(values: unknown[]): MemoryRow {
  return {
    id: values[0] as number,
    public_id: values[1] as string,
    namespace: values[2] as string,
    key: values[3] as string | null,
    content: values[4] as string,
    content_hash: values[5] as string,
    tags: values[6] as string,
    metadata: values[7] as string,
    pinned: values[8] as number,
    created_at: values[9] as number,
    updated_at: values[10] as number,
    occurred_at: values[11] as number,
    expires_at: values[12] as number | null,
    embedding_status: values[13] as string,
    superseded_by: values[14] as string | null,
  };
}

/** A statement's raw rows as MemoryRows: `read` is a statement set to raw mode. */
export function rowsOf(raw: unknown[][]): MemoryRow[] {
  const rows = new Array<MemoryRow>(raw.length);
  for (let i = 0; i < raw.length; i++) rows[i] = rowOf(raw[i]!);
  return rows;
}
