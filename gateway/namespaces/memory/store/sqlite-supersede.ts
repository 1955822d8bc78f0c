import type Database from 'better-sqlite3';
import type { SqliteDatabase } from '../../../store/index.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import { signBits } from './sqlite-schema.ts';
import { SUPERSEDE_NEIGHBOURS } from './write-plan.ts';

type Statements = (sql: string) => Database.Statement<unknown[]>;

/**
 * The automatic update rule (autoSupersedeOrder in write-plan.ts) in SQLite: candidates come
 * from the key's in-memory sign bits and are checked by float cosine, so a large key costs
 * a bit scan, not a cosine over every vector. Rows already superseded are skipped.
 *
 * Each row is its own transaction, with a turn of the event loop between rows: the indexer
 * runs this on the request thread after every stored batch, and a batch of 16 rows in one
 * transaction held the thread for 16 bit scans of the key at once (about 0.3 ms each at
 * 25k memories on a loaded machine, more as the key grows), which writes waiting in that
 * turn paid in full. A transaction that marks nothing commits without writing.
 */
export async function supersedeSimilarRows(
  db: SqliteDatabase,
  st: Statements,
  bitIndex: SqliteBitIndex,
  rowIds: number[],
  minSimilarity: number,
): Promise<number> {
  const one = db.transaction((rowId: number): number => {
    const row = st(
      `SELECT m.public_id, m.api_key_id, m.namespace, f.embedding FROM memories m
         JOIN memories_vec_float f ON f.memory_id = m.id WHERE m.id = ? AND m.superseded_by IS NULL`,
    ).get(rowId) as
      | { public_id: string; api_key_id: string; namespace: string; embedding: Buffer }
      | undefined;
    if (!row) return 0;
    const vector = new Float32Array(
      row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.length),
    );
    const near = bitIndex.candidates(row.api_key_id, signBits(vector), SUPERSEDE_NEIGHBOURS + 1);
    if (near.length === 0) return 0;
    return st(
      `UPDATE memories SET superseded_by = @by WHERE id IN (
         SELECT m.id FROM json_each(@ids) c CROSS JOIN memories m ON m.id = c.value
           JOIN memories_vec_float f ON f.memory_id = m.id
          WHERE m.api_key_id = @key AND m.namespace = @ns AND m.id < @row AND m.superseded_by IS NULL
            AND m.pinned = 0 AND m.key IS NULL AND vec_distance_cosine(f.embedding, @qv) <= @maxd)`,
    ).run({
      by: row.public_id,
      ids: JSON.stringify(near),
      key: row.api_key_id,
      ns: row.namespace,
      row: rowId,
      qv: row.embedding,
      maxd: 1 - minSimilarity,
    }).changes;
  });
  let marked = 0;
  for (const [i, rowId] of rowIds.entries()) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    marked += one.immediate(rowId);
  }
  return marked;
}
