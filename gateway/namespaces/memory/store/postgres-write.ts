import type { PgClient } from '../../../store/index.ts';
import { type MemoryRow, type StoredMemory, storedMemory, toRecord } from './common.ts';
import type { MemoryRecord } from './types.ts';
import type { AsyncWriteStatements, RowValues } from './write-plan.ts';

/** A row's values in column order; the driver sends tags as text[] and metadata as jsonb. */
function columns(values: RowValues): unknown[] {
  return [
    values.content,
    values.contentHash,
    values.tags,
    values.metadata,
    values.pinned,
    values.expiresAt,
    values.occurredAt,
  ];
}

/**
 * The write plan's statements in Postgres's dialect, on the client of the transaction that
 * holds the key's advisory lock.
 */
export class PgWriteStatements implements AsyncWriteStatements {
  constructor(
    private readonly c: PgClient,
    private readonly apiKeyId: string,
    private readonly now: number,
  ) {}

  private async one(sql: string, params: unknown[]): Promise<MemoryRow | undefined> {
    return (await this.c.query(sql, params)).rows[0] as MemoryRow | undefined;
  }

  async purgeExpired(): Promise<void> {
    await this.c.query(
      'DELETE FROM memories WHERE api_key_id = $1 AND expires_at IS NOT NULL AND expires_at <= $2',
      [this.apiKeyId, this.now],
    );
  }

  async holds(id: string): Promise<boolean> {
    const found = await this.c.query(
      'SELECT 1 FROM memories WHERE public_id = $1 AND api_key_id = $2 AND (expires_at IS NULL OR expires_at > $3)',
      [id, this.apiKeyId, this.now],
    );
    return (found.rowCount ?? 0) > 0;
  }

  async byKey(namespace: string, key: string): Promise<StoredMemory | undefined> {
    return storedMemory(
      await this.one('SELECT * FROM memories WHERE api_key_id = $1 AND namespace = $2 AND key = $3', [
        this.apiKeyId,
        namespace,
        key,
      ]),
    );
  }

  async twin(namespace: string, contentHash: string): Promise<StoredMemory | undefined> {
    return storedMemory(
      await this.one(
        'SELECT * FROM memories WHERE api_key_id = $1 AND namespace = $2 AND content_hash = $3 ORDER BY id LIMIT 1',
        [this.apiKeyId, namespace, contentHash],
      ),
    );
  }

  async count(): Promise<number> {
    const row = (
      await this.c.query('SELECT COUNT(*)::int AS n FROM memories WHERE api_key_id = $1', [this.apiKeyId])
    ).rows[0] as { n: number };
    return row.n;
  }

  async leastRecent(limit: number): Promise<{ rowId: number; id: string }[]> {
    const rows = (
      await this.c.query(
        'SELECT id, public_id FROM memories WHERE api_key_id = $1 AND NOT pinned ORDER BY updated_at, id LIMIT $2',
        [this.apiKeyId, limit],
      )
    ).rows as { id: string; public_id: string }[];
    return rows.map((row) => ({ rowId: Number(row.id), id: row.public_id }));
  }

  async remove(rowIds: number[]): Promise<void> {
    await this.c.query('DELETE FROM memories WHERE id = ANY($1::bigint[])', [rowIds]);
  }

  async insert(id: string, namespace: string, key: string | null, values: RowValues): Promise<MemoryRecord> {
    const row = await this.one(
      `INSERT INTO memories (public_id, api_key_id, namespace, key, content, content_hash, tags, metadata, pinned,
         expires_at, occurred_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, COALESCE($11::bigint, $12), $12, $12) RETURNING *`,
      [id, this.apiKeyId, namespace, key, ...columns(values), this.now],
    );
    return toRecord(row!);
  }

  async rewrite(
    rowId: number,
    namespace: string,
    values: RowValues,
    reembed: boolean,
  ): Promise<MemoryRecord> {
    const row = await this.one(
      `UPDATE memories SET content = $1, content_hash = $2, tags = $3, metadata = $4, pinned = $5, expires_at = $6,
         occurred_at = COALESCE($7::bigint, $9), namespace = $8, updated_at = $9,
         embedding_status = CASE WHEN $10::boolean THEN 'pending' ELSE embedding_status END
       WHERE id = $11 RETURNING *`,
      [...columns(values), namespace, this.now, reembed, rowId],
    );
    return toRecord(row!);
  }

  async touch(rowId: number, tags: string[], pinned: boolean): Promise<MemoryRecord> {
    const row = await this.one(
      'UPDATE memories SET tags = $1, pinned = $2, updated_at = $3 WHERE id = $4 RETURNING *',
      [tags, pinned, this.now, rowId],
    );
    return toRecord(row!);
  }

  async markSuperseded(olderId: string, newerId: string): Promise<void> {
    await this.c.query('UPDATE memories SET superseded_by = $1 WHERE public_id = $2 AND api_key_id = $3', [
      newerId,
      olderId,
      this.apiKeyId,
    ]);
  }
}
