import { keyIndexName, type ValidKeyIndexes } from './postgres-key-index.ts';
import { efSearchFor, hasVectorTable, type PgAccess, withEfSearch } from './postgres-search.ts';
import { SUPERSEDE_NEIGHBOURS } from './write-plan.ts';

/** What both statement shapes do with the memory (`me`) and its nearest (`near`). */
const SUPERSEDE_TAIL = `older AS (
   UPDATE memories SET superseded_by = (SELECT public_id FROM me)
    WHERE id IN (SELECT near.id FROM near, me WHERE d <= $2 AND NOT near.pinned AND near.key IS NULL
                   AND (near.occurred_at, near.id) < (me.occurred_at, me.id)) RETURNING id),
 newer AS (
   SELECT near.public_id FROM near, me WHERE d <= $2 AND (near.occurred_at, near.id) > (me.occurred_at, me.id)
    ORDER BY near.occurred_at DESC, near.id DESC LIMIT 1),
 self AS (
   UPDATE memories SET superseded_by = (SELECT public_id FROM newer)
    WHERE id = (SELECT id FROM me WHERE NOT pinned AND key IS NULL) AND EXISTS (SELECT 1 FROM newer)
    RETURNING id)
 SELECT id FROM older UNION ALL SELECT id FROM self`;

/**
 * A memory of a key without an index of its own. The neighbours are ordered by a distance
 * to a joined row, which no index scan can give: the planner reads the key's vectors and
 * sorts them, exact. (The shape of the key-index statement below, on the table-wide index
 * filtered by key, found none of the one neighbour this found at 10 keys of 20k: the
 * filtered-scan loss of decision 1102.)
 */
export const SUPERSEDE_EXACT_SQL = `WITH me AS (
   SELECT m.id, m.public_id, m.api_key_id, m.namespace, m.occurred_at, m.pinned, m.key, v.embedding
     FROM memories m JOIN memory_vectors v ON v.memory_id = m.id
    WHERE m.id = $1 AND m.superseded_by IS NULL),
 near AS (
   SELECT m.id, m.public_id, m.occurred_at, m.pinned, m.key, (v.embedding <=> me.embedding) AS d FROM me
     JOIN memory_vectors v ON v.api_key_id = me.api_key_id
     JOIN memories m ON m.id = v.memory_id
    WHERE m.namespace = me.namespace AND m.id <> me.id AND m.superseded_by IS NULL
    ORDER BY v.embedding <=> me.embedding LIMIT $3),
 ${SUPERSEDE_TAIL}`;

/**
 * A memory of a key with its own index (postgres-key-index.ts). The key is `$4`, bound as a
 * value, and the memory's vector reaches the neighbour scan as a scalar subquery (one value
 * for the whole scan): so the planner can order the scan by the key's partial HNSW index.
 */
export const SUPERSEDE_KEY_INDEX_SQL = `WITH me AS (
   SELECT m.id, m.public_id, m.namespace, m.occurred_at, m.pinned, m.key, v.embedding
     FROM memories m JOIN memory_vectors v ON v.memory_id = m.id
    WHERE m.id = $1 AND m.api_key_id = $4 AND m.superseded_by IS NULL),
 near AS (
   SELECT m.id, m.public_id, m.occurred_at, m.pinned, m.key, (v.embedding <=> (SELECT embedding FROM me)) AS d
     FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
    WHERE v.api_key_id = $4 AND EXISTS (SELECT 1 FROM me) AND m.namespace = (SELECT namespace FROM me)
      AND m.id <> $1 AND m.superseded_by IS NULL
    ORDER BY v.embedding <=> (SELECT embedding FROM me) LIMIT $3),
 ${SUPERSEDE_TAIL}`;

/** Enough for the indexer's batches (16 or 32 rows) many times over; older entries go first. */
const MAX_ROW_KEYS = 4096;

/**
 * Each memory row's key, learnt where the store writes the row's vector (that statement
 * reads it anyway) and a memory never changes key: supersession, given only row ids, asks
 * the server for the keys of none of the rows the indexer just embedded.
 */
export class RowKeys {
  private readonly keys = new Map<number, string>();

  note(rowId: number, apiKeyId: string): void {
    if (this.keys.size >= MAX_ROW_KEYS) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(rowId, apiKeyId);
  }

  /** The keys known of `rowIds`, forgotten here: a row is superseded once per vector stored. */
  take(rowIds: readonly number[]): Map<number, string> {
    const found = new Map<number, string>();
    for (const rowId of rowIds) {
      const key = this.keys.get(rowId);
      if (key === undefined) continue;
      found.set(rowId, key);
      this.keys.delete(rowId);
    }
    return found;
  }
}

/** The rows' keys: those `known` gives, the rest (rows whose vector another process wrote) from the server. */
async function ownersOf(
  db: PgAccess,
  rowIds: number[],
  known: Map<number, string>,
): Promise<Map<number, string>> {
  const missing = rowIds.filter((rowId) => !known.has(rowId));
  if (missing.length === 0) return known;
  const rows = await db.q<{ id: string; api_key_id: string }>(
    'SELECT id, api_key_id FROM memories WHERE id = ANY($1::bigint[])',
    [missing],
  );
  const keys = new Map(known);
  for (const row of rows) keys.set(Number(row.id), row.api_key_id);
  return keys;
}

/**
 * A key's own index is scanned with the candidate list a search of this fetch gets
 * (decision 1102); the exact statement scans no index, so it needs no transaction to set one.
 */
function onKeyIndex(db: PgAccess, params: unknown[]): Promise<unknown[]> {
  return withEfSearch(
    db,
    efSearchFor(SUPERSEDE_NEIGHBOURS),
    async (client) => (await client.query(SUPERSEDE_KEY_INDEX_SQL, params)).rows,
  );
}

/**
 * The automatic update rule on Postgres, as supersedeSimilarRows does it on SQLite: each
 * memory supersedes the current ones of its key and namespace within `minSimilarity` cosine
 * that come before it in event time (never pinned or upsert-keyed ones), and is itself
 * superseded by the latest such one that comes after it. A key's own HNSW index finds the
 * nearest few; without one they are found exactly. `known` holds row keys the store learnt;
 * with no per-key index in sight no key is needed, and the batch is its statements alone
 * (decision 1104).
 */
export async function pgSupersedeSimilar(
  db: PgAccess,
  rowIds: number[],
  minSimilarity: number,
  indexes: ValidKeyIndexes,
  known: Map<number, string>,
): Promise<number> {
  if (!(await hasVectorTable(db))) return 0;
  const indexed = await indexes.current(db);
  const keys = indexed.size === 0 ? known : await ownersOf(db, rowIds, known);
  let marked = 0;
  for (const rowId of rowIds) {
    const apiKeyId = keys.get(rowId);
    const params = [rowId, 1 - minSimilarity, SUPERSEDE_NEIGHBOURS];
    const rows =
      apiKeyId !== undefined && indexed.has(keyIndexName(apiKeyId))
        ? await onKeyIndex(db, [...params, apiKeyId])
        : // A row gone since (deleted) finds no `me` here and marks nothing.
          await db.q(SUPERSEDE_EXACT_SQL, params);
    marked += rows.length;
  }
  return marked;
}
