import type { SqliteDatabase } from '../../../store/index.ts';
import { sameJson } from './common.ts';
import type { Statements } from './sqlite-rows.ts';
import { CLEAR_VECTORS_SQL, signBits, VECTOR_TABLES_SQL } from './sqlite-schema.ts';
import type { EmbeddingModelInfo, PendingEmbedding, PendingOutcome } from './types.ts';

const MODEL_SETTING = 'embedding_model';

/**
 * The SQLite store's embedding side: which model the vectors come from, the pending
 * queue the indexer drains, and writing a vector to both the bit index and the float table.
 */
export class SqliteVectorSpace {
  /** False until a model is adopted (no vector tables yet); search then runs keyword-only. */
  ready = false;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly st: Statements,
    private readonly forgetCached: () => void,
  ) {
    this.refresh();
  }

  refresh(): void {
    this.ready =
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories_bits'").get() !==
      undefined;
  }

  model(): EmbeddingModelInfo | null {
    const row = this.st('SELECT value FROM memory_settings WHERE name = ?').get(MODEL_SETTING) as
      | { value: string }
      | undefined;
    return row ? (JSON.parse(row.value) as EmbeddingModelInfo) : null;
  }

  adopt(info: EmbeddingModelInfo): boolean {
    const run = this.db.transaction(() => {
      const held = this.model();
      if (held) return sameJson(held, info);
      this.db.exec(VECTOR_TABLES_SQL);
      this.st('INSERT INTO memory_settings (name, value) VALUES (?, ?)').run(
        MODEL_SETTING,
        JSON.stringify(info),
      );
      return true;
    });
    const adopted = run.immediate();
    this.refresh();
    return adopted;
  }

  reset(info: EmbeddingModelInfo): number {
    const run = this.db.transaction(() => {
      this.db.exec(VECTOR_TABLES_SQL);
      this.db.exec(CLEAR_VECTORS_SQL);
      this.st('INSERT OR REPLACE INTO memory_settings (name, value) VALUES (?, ?)').run(
        MODEL_SETTING,
        JSON.stringify(info),
      );
      return this.st("UPDATE memories SET embedding_status = 'pending'").run().changes;
    });
    const changed = run.immediate();
    this.forgetCached();
    this.refresh();
    return changed;
  }

  pending(limit: number, afterRowId: number): PendingEmbedding[] {
    return this.st(
      `SELECT id AS rowId, content, content_hash AS contentHash FROM memories
        WHERE embedding_status = 'pending' AND id > ? ORDER BY id LIMIT ?`,
    ).all(afterRowId, limit) as PendingEmbedding[];
  }

  set(rowId: number, hash: string, vector: Float32Array): boolean {
    // Another thread or process may have adopted the model since this connection looked.
    if (!this.ready) this.refresh();
    const run = this.db.transaction(() => {
      const row = this.st('SELECT api_key_id FROM memories WHERE id = ? AND content_hash = ?').get(
        rowId,
        hash,
      ) as { api_key_id: string } | undefined;
      if (!row) return false;
      // Delete then insert, so the row takes a new seq and cached copies pick it up.
      this.st('DELETE FROM memories_bits WHERE memory_id = ?').run(rowId);
      this.st('INSERT INTO memories_bits (memory_id, api_key_id, bits) VALUES (?, ?, ?)').run(
        rowId,
        row.api_key_id,
        signBits(vector),
      );
      this.st('INSERT OR REPLACE INTO memories_vec_float (memory_id, embedding) VALUES (?, ?)').run(
        rowId,
        Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
      );
      this.st("UPDATE memories SET embedding_status = 'ready' WHERE id = ?").run(rowId);
      return true;
    });
    return run.immediate();
  }

  /**
   * One commit for the indexer's whole batch instead of one per row; each set() nests as a
   * savepoint, so a row whose content changed meanwhile is skipped on its own.
   */
  storeBatch(outcomes: PendingOutcome[]): number {
    const run = this.db.transaction(() => {
      let stored = 0;
      for (const { rowId, contentHash, vector } of outcomes) {
        if (vector === null) this.markFailed(rowId, contentHash);
        else if (this.set(rowId, contentHash, vector)) stored++;
      }
      return stored;
    });
    return run.immediate();
  }

  markFailed(rowId: number, hash: string): void {
    this.st("UPDATE memories SET embedding_status = 'failed' WHERE id = ? AND content_hash = ?").run(
      rowId,
      hash,
    );
  }
}
