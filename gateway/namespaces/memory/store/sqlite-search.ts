import type Database from 'better-sqlite3';
import { type MemoryRow, RRF_K, toRecord } from './common.ts';
import { narrowsBeyondKey, sqliteFilter } from './sqlite-filter.ts';
import { ftsQuery } from './sqlite-fts.ts';
import { signBits } from './sqlite-schema.ts';
import type { SearchHit, SearchRequest } from './types.ts';

type Statements = (sql: string) => Database.Statement<unknown[]>;

/**
 * How many bit-index candidates are re-ranked by float cosine per row the vector arm
 * wants (limit × 4). sqlite-vec's KNN costs grow with k as well as with the key's size, so
 * this is the smallest factor that kept recall@10 against an exact scan near 0.99 on
 * USE-lite vectors of 10k WordNet definitions (k = 40: 0.94, 80: 0.986, 120: 0.994,
 * 320: 1.0); `npm run bench -- memory` reports the recall it gives at each size.
 */
export const RERANK_FACTOR = 3;
const MIN_CANDIDATES = 64;
const MAX_CANDIDATES = 4096;

/**
 * Hybrid search in one statement: FTS5 bm25 and vector cosine, each arm ranked on its own,
 * fused by weighted reciprocal rank. Every arm and the final join are scoped by the key.
 */
export function sqliteSearch(
  st: Statements,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
  hasVectors: boolean,
): SearchHit[] {
  const where = sqliteFilter(apiKeyId, request.filter, now);
  const fetch = Math.min(request.limit * 4, MAX_CANDIDATES);
  const useVector = request.mode !== 'keyword' && request.vector !== null && hasVectors;
  const useKeyword = request.mode !== 'vector' && request.terms.length > 0;
  if (!useVector && !useKeyword) return [];
  const params: Record<string, unknown> = { ...where.params, fetch, limit: request.limit };
  let vec = 'SELECT NULL AS id, NULL AS distance, NULL AS rnk WHERE 0';
  if (useVector) {
    const vector = request.vector!;
    params.qv = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    params.maxd = 1 - request.minScore;
    // Narrow filters scan the matching rows' float vectors exactly. Otherwise the key's
    // partition of the bit index yields candidates (hamming distance) that float cosine
    // re-ranks; a key with fewer vectors than candidates is thereby searched exactly.
    let arm: string;
    if (narrowsBeyondKey(request.filter)) {
      arm = `SELECT f.memory_id AS id, vec_distance_cosine(f.embedding, @qv) AS distance
               FROM memories m JOIN memories_vec_float f ON f.memory_id = m.id
              WHERE ${where.sql} ORDER BY distance LIMIT @fetch`;
    } else {
      params.qb = signBits(vector);
      params.cand = Math.min(Math.max(fetch * RERANK_FACTOR, MIN_CANDIDATES), MAX_CANDIDATES);
      arm = `SELECT c.id, vec_distance_cosine(f.embedding, @qv) AS distance
               FROM (SELECT memory_id AS id FROM memories_vec
                      WHERE embedding MATCH vec_bit(@qb) AND k = @cand AND api_key_id = @key) c
               JOIN memories_vec_float f ON f.memory_id = c.id JOIN memories m ON m.id = c.id
              WHERE ${where.sql} ORDER BY distance LIMIT @fetch`;
    }
    vec = `SELECT id, distance, row_number() OVER (ORDER BY distance) AS rnk FROM (${arm}) WHERE distance <= @maxd`;
  }
  let kw = 'SELECT NULL AS id, NULL AS bm, NULL AS rnk WHERE 0';
  const fts = useKeyword ? ftsQuery(apiKeyId, request.terms) : null;
  if (fts !== null) {
    params.fts = fts;
    kw = `SELECT id, bm, row_number() OVER (ORDER BY bm) AS rnk FROM (
            SELECT f.rowid AS id, bm25(memories_fts) AS bm FROM memories_fts f JOIN memories m ON m.id = f.rowid
             WHERE memories_fts MATCH @fts AND ${where.sql} ORDER BY bm LIMIT @fetch)`;
  }
  params.wv = request.weights.vector;
  params.wk = request.weights.keyword;
  const rows = st(
    `WITH vec AS MATERIALIZED (${vec}), kw AS MATERIALIZED (${kw}),
     fused AS (
       SELECT COALESCE(vec.id, kw.id) AS id, vec.distance AS distance, kw.bm AS bm,
              COALESCE(@wv / (${RRF_K}.0 + vec.rnk), 0) + COALESCE(@wk / (${RRF_K}.0 + kw.rnk), 0) AS rrf
         FROM vec FULL OUTER JOIN kw ON vec.id = kw.id)
     SELECT m.*, fused.distance AS _distance, fused.bm AS _bm, fused.rrf AS _rrf
       FROM fused JOIN memories m ON m.id = fused.id AND m.api_key_id = @key
      ORDER BY fused.rrf DESC, m.id DESC LIMIT @limit`,
  ).all(params) as (MemoryRow & { _distance: number | null; _bm: number | null; _rrf: number })[];
  return rows.map((row) => ({
    memory: toRecord(row),
    score: row._distance === null ? null : 1 - row._distance,
    keywordScore: row._bm === null ? null : -row._bm,
    rrf: row._rrf,
    source:
      row._distance !== null && row._bm !== null ? 'both' : row._distance !== null ? 'vector' : 'keyword',
  }));
}
