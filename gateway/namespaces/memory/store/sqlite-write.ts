import { type MemoryRow, type StoredMemory, storedMemory, toRecord } from './common.ts';
import type { Statements } from './sqlite-rows.ts';
import type { MemoryRecord } from './types.ts';
import type { RowValues, WriteStatements } from './write-plan.ts';

/** A row's values as SQLite stores them, in column order: tags and metadata as JSON text, pinned as 0/1. */
function columns(values: RowValues): unknown[] {
  return [
    values.content,
    values.contentHash,
    JSON.stringify(values.tags),
    JSON.stringify(values.metadata),
    values.pinned ? 1 : 0,
    values.expiresAt,
    values.occurredAt,
  ];
}

/** The write plan's statements in SQLite's dialect. */
export class SqliteWriteStatements implements WriteStatements {
  constructor(
    private readonly st: Statements,
    private readonly apiKeyId: string,
    private readonly now: number,
  ) {}

  purgeExpired(): void {
    this.st('DELETE FROM memories WHERE api_key_id = ? AND expires_at IS NOT NULL AND expires_at <= ?').run(
      this.apiKeyId,
      this.now,
    );
  }

  holds(id: string): boolean {
    return (
      this.st(
        'SELECT 1 FROM memories WHERE public_id = ? AND api_key_id = ? AND (expires_at IS NULL OR expires_at > ?)',
      ).get(id, this.apiKeyId, this.now) !== undefined
    );
  }

  byKey(namespace: string, key: string): StoredMemory | undefined {
    return storedMemory(
      this.st('SELECT * FROM memories WHERE api_key_id = ? AND namespace = ? AND key = ?').get(
        this.apiKeyId,
        namespace,
        key,
      ) as MemoryRow | undefined,
    );
  }

  twin(namespace: string, contentHash: string): StoredMemory | undefined {
    return storedMemory(
      this.st(
        'SELECT * FROM memories WHERE api_key_id = ? AND namespace = ? AND content_hash = ? ORDER BY id LIMIT 1',
      ).get(this.apiKeyId, namespace, contentHash) as MemoryRow | undefined,
    );
  }

  /** Read from the per-key count the triggers keep, so the cap check does not count the key's rows. */
  count(): number {
    const row = this.st('SELECT n FROM memory_key_counts WHERE api_key_id = ?').get(this.apiKeyId) as
      | { n: number }
      | undefined;
    return row?.n ?? 0;
  }

  leastRecent(limit: number): { rowId: number; id: string }[] {
    return (
      this.st(
        'SELECT id, public_id FROM memories WHERE api_key_id = ? AND pinned = 0 ORDER BY updated_at, id LIMIT ?',
      ).all(this.apiKeyId, limit) as { id: number; public_id: string }[]
    ).map((row) => ({ rowId: row.id, id: row.public_id }));
  }

  remove(rowIds: number[]): void {
    const remove = this.st('DELETE FROM memories WHERE id = ?');
    for (const rowId of rowIds) remove.run(rowId);
  }

  insert(id: string, namespace: string, key: string | null, values: RowValues): MemoryRecord {
    const row = this.st(
      `INSERT INTO memories (public_id, api_key_id, namespace, key, content, content_hash, tags, metadata, pinned,
         expires_at, occurred_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, ?), ?, ?) RETURNING *`,
    ).get(id, this.apiKeyId, namespace, key, ...columns(values), this.now, this.now, this.now);
    return toRecord(row as MemoryRow);
  }

  rewrite(rowId: number, namespace: string, values: RowValues, reembed: boolean): MemoryRecord {
    const row = this.st(
      `UPDATE memories SET content = ?, content_hash = ?, tags = ?, metadata = ?, pinned = ?, expires_at = ?,
         occurred_at = COALESCE(?, ?), namespace = ?, updated_at = ?,
         embedding_status = CASE WHEN ? THEN 'pending' ELSE embedding_status END
       WHERE id = ? RETURNING *`,
    ).get(...columns(values), this.now, namespace, this.now, reembed ? 1 : 0, rowId);
    return toRecord(row as MemoryRow);
  }

  touch(rowId: number, tags: string[], pinned: boolean): MemoryRecord {
    const row = this.st(
      'UPDATE memories SET tags = ?, pinned = ?, updated_at = ? WHERE id = ? RETURNING *',
    ).get(JSON.stringify(tags), pinned ? 1 : 0, this.now, rowId);
    return toRecord(row as MemoryRow);
  }

  markSuperseded(olderId: string, newerId: string): void {
    this.st('UPDATE memories SET superseded_by = ? WHERE public_id = ? AND api_key_id = ?').run(
      newerId,
      olderId,
      this.apiKeyId,
    );
  }
}
