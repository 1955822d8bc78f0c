import type Database from 'better-sqlite3';
import type { SqliteDatabase } from '../../../store/index.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import { signBits } from './sqlite-schema.ts';

type Statements = (sql: string) => Database.Statement<unknown[]>;

/** Nearest older memories looked at per new one: a likely update is among the closest few. */
const NEIGHBOURS = 16;

/**
 * The automatic update rule (see ranking.ts and docs/decisions.md): each given memory, once
 * embedded, supersedes the older memories of its key and namespace whose vectors lie within
 * `minSimilarity` cosine of its own. Pinned memories and upsert-keyed ones are never
 * superseded this way (their writers manage them), nor are ones already superseded.
 * Candidates come from the key's in-memory sign bits and are checked by float cosine, so a
 * large key costs a bit scan, not a cosine over every vector.
 */
export function supersedeSimilarRows(
  db: SqliteDatabase,
  st: Statements,
  bitIndex: SqliteBitIndex,
  rowIds: number[],
  minSimilarity: number,
): number {
  let marked = 0;
  const run = db.transaction(() => {
    for (const rowId of rowIds) {
      const row = st(
        `SELECT m.public_id, m.api_key_id, m.namespace, f.embedding FROM memories m
           JOIN memories_vec_float f ON f.memory_id = m.id WHERE m.id = ? AND m.superseded_by IS NULL`,
      ).get(rowId) as
        | { public_id: string; api_key_id: string; namespace: string; embedding: Buffer }
        | undefined;
      if (!row) continue;
      const vector = new Float32Array(
        row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.length),
      );
      const near = bitIndex.candidates(row.api_key_id, signBits(vector), NEIGHBOURS + 1);
      if (near.length === 0) continue;
      marked += st(
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
    }
  });
  run.immediate();
  return marked;
}
