import type { SqliteDatabase } from '../../../store/index.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import type { Statements } from './sqlite-rows.ts';
import { signBits } from './sqlite-schema.ts';
import { SUPERSEDE_NEIGHBOURS } from './write-plan.ts';

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
      `SELECT m.public_id, m.api_key_id, m.namespace, m.occurred_at, m.pinned, m.key, f.embedding FROM memories m
         JOIN memories_vec_float f ON f.memory_id = m.id WHERE m.id = ? AND m.superseded_by IS NULL`,
    ).get(rowId) as
      | {
          public_id: string;
          api_key_id: string;
          namespace: string;
          occurred_at: number;
          pinned: number;
          key: string | null;
          embedding: Buffer;
        }
      | undefined;
    if (!row) return 0;
    const vector = new Float32Array(
      row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.length),
    );
    const near = bitIndex.candidates(row.api_key_id, signBits(vector), SUPERSEDE_NEIGHBOURS + 1);
    if (near.length === 0) return 0;
    const params = {
      ids: JSON.stringify(near),
      key: row.api_key_id,
      ns: row.namespace,
      row: rowId,
      occ: row.occurred_at,
      qv: row.embedding,
      maxd: 1 - minSimilarity,
    };
    const similar = `FROM json_each(@ids) c CROSS JOIN memories m ON m.id = c.value
           JOIN memories_vec_float f ON f.memory_id = m.id
          WHERE m.api_key_id = @key AND m.namespace = @ns AND m.id <> @row AND m.superseded_by IS NULL
            AND vec_distance_cosine(f.embedding, @qv) <= @maxd`;
    // Older and newer go by event time, so a memory imported late about the past does not
    // replace what is known to have come after it: a later one replaces it instead.
    let marked = st(
      `UPDATE memories SET superseded_by = @by WHERE id IN (
         SELECT m.id ${similar} AND (m.occurred_at, m.id) < (@occ, @row) AND m.pinned = 0 AND m.key IS NULL)`,
    ).run({ ...params, by: row.public_id }).changes;
    if (row.pinned === 0 && row.key === null) {
      const newer = st(
        `SELECT m.public_id ${similar} AND (m.occurred_at, m.id) > (@occ, @row)
          ORDER BY m.occurred_at DESC, m.id DESC LIMIT 1`,
      ).get(params) as { public_id: string } | undefined;
      if (newer)
        marked += st('UPDATE memories SET superseded_by = ? WHERE id = ?').run(
          newer.public_id,
          rowId,
        ).changes;
    }
    return marked;
  });
  let marked = 0;
  for (const [i, rowId] of rowIds.entries()) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    marked += one.immediate(rowId);
  }
  return marked;
}
