import { sameJson } from './common.ts';
import { PG_DROP_VECTORS_SQL, pgVectorTableSql, vectorLiteral } from './postgres-schema.ts';
import type { PgAccess } from './postgres-search.ts';
import type { EmbeddingModelInfo, PendingEmbedding } from './types.ts';

const MODEL_SETTING = 'embedding_model';

/**
 * The Postgres store's embedding side: which model the vectors come from (changed only
 * under one advisory lock, so gateways starting together agree), the pending queue the
 * indexer drains, and the vectors themselves.
 */
export class PgVectorSpace {
  constructor(private readonly db: PgAccess) {}

  async model(): Promise<EmbeddingModelInfo | null> {
    const [row] = await this.db.q<{ value: string }>('SELECT value FROM memory_settings WHERE name = $1', [
      MODEL_SETTING,
    ]);
    return row ? (JSON.parse(row.value) as EmbeddingModelInfo) : null;
  }

  async adopt(info: EmbeddingModelInfo): Promise<boolean> {
    return this.db.tx('memory:settings', async (c) => {
      const row = (await c.query('SELECT value FROM memory_settings WHERE name = $1', [MODEL_SETTING]))
        .rows[0] as { value: string } | undefined;
      if (row) return sameJson(JSON.parse(row.value), info);
      await c.query(pgVectorTableSql(info.dimensions));
      await c.query('INSERT INTO memory_settings (name, value) VALUES ($1, $2)', [
        MODEL_SETTING,
        JSON.stringify(info),
      ]);
      return true;
    });
  }

  async reset(info: EmbeddingModelInfo): Promise<number> {
    return this.db.tx('memory:settings', async (c) => {
      await c.query(PG_DROP_VECTORS_SQL);
      await c.query(pgVectorTableSql(info.dimensions));
      await c.query(
        'INSERT INTO memory_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value',
        [MODEL_SETTING, JSON.stringify(info)],
      );
      return (await c.query("UPDATE memories SET embedding_status = 'pending'")).rowCount ?? 0;
    });
  }

  async pending(limit: number, afterRowId: number): Promise<PendingEmbedding[]> {
    const rows = await this.db.q<{ id: string; content: string; content_hash: string }>(
      `SELECT id, content, content_hash FROM memories WHERE embedding_status = 'pending' AND id > $1 ORDER BY id LIMIT $2`,
      [afterRowId, limit],
    );
    return rows.map((r) => ({ rowId: Number(r.id), content: r.content, contentHash: r.content_hash }));
  }

  /** Stores the vector if the row still holds the content embedded; the row's key when it did, else null. */
  async set(rowId: number, hash: string, vector: Float32Array): Promise<string | null> {
    return this.db.tx(null, async (c) => {
      const row = (
        await c.query('SELECT api_key_id FROM memories WHERE id = $1 AND content_hash = $2 FOR UPDATE', [
          rowId,
          hash,
        ])
      ).rows[0] as { api_key_id: string } | undefined;
      if (!row) return null;
      await c.query(
        `INSERT INTO memory_vectors (memory_id, api_key_id, embedding) VALUES ($1, $2, $3::vector)
         ON CONFLICT (memory_id) DO UPDATE SET embedding = EXCLUDED.embedding`,
        [rowId, row.api_key_id, vectorLiteral(vector)],
      );
      await c.query("UPDATE memories SET embedding_status = 'ready' WHERE id = $1", [rowId]);
      return row.api_key_id;
    });
  }

  async markFailed(rowId: number, hash: string): Promise<void> {
    await this.db.q("UPDATE memories SET embedding_status = 'failed' WHERE id = $1 AND content_hash = $2", [
      rowId,
      hash,
    ]);
  }
}
