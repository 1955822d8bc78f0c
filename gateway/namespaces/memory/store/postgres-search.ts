import type { PgClient } from '../../../store/index.ts';
import { type MemoryRow, RRF_K, toRecord } from './common.ts';
import { pgFilter, vectorLiteral } from './postgres-schema.ts';
import type { SearchHit, SearchRequest } from './types.ts';

/** What the search and vector modules need from the store: plain queries and key-locked transactions. */
export interface PgAccess {
  q<T>(sql: string, params?: unknown[]): Promise<T[]>;
  tx<T>(apiKeyId: string | null, fn: (client: PgClient) => Promise<T>): Promise<T>;
}

async function hasVectorTable(db: PgAccess): Promise<boolean> {
  const [row] = await db.q<{ t: string | null }>("SELECT to_regclass('memory_vectors')::text AS t");
  return row?.t != null;
}

/**
 * Hybrid search in one statement: the pgvector cosine arm (HNSW with iterative scans, the
 * key filter inside) and the tsvector arm, each ranked on its own and fused by weighted
 * reciprocal rank. Every arm and the final join are scoped by the key.
 */
export async function pgSearch(
  db: PgAccess,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
): Promise<SearchHit[]> {
  const useVector = request.mode !== 'keyword' && request.vector !== null && (await hasVectorTable(db));
  const useKeyword = request.mode !== 'vector' && request.terms.length > 0;
  if (!useVector && !useKeyword) return [];
  const params: unknown[] = [];
  const where = pgFilter(apiKeyId, request.filter, now, params);
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const fetch = p(request.limit * 4);
  let vec = 'SELECT NULL::bigint AS id, NULL::float8 AS d, NULL::bigint AS rnk WHERE false';
  if (useVector) {
    const qv = p(vectorLiteral(request.vector!));
    vec = `SELECT id, d, row_number() OVER (ORDER BY d) AS rnk FROM (
             SELECT v.memory_id AS id, (v.embedding <=> ${qv}::vector)::float8 AS d
               FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
              WHERE v.api_key_id = $1 AND ${where}
              ORDER BY v.embedding <=> ${qv}::vector LIMIT ${fetch}) x
           WHERE d <= ${p(1 - request.minScore)}`;
  }
  let kw = 'SELECT NULL::bigint AS id, NULL::float8 AS r, NULL::bigint AS rnk WHERE false';
  if (useKeyword) {
    const tsq = p(request.terms.join(' OR '));
    kw = `SELECT id, r, row_number() OVER (ORDER BY r DESC, id DESC) AS rnk FROM (
            SELECT m.id, ts_rank_cd(m.content_tsv, q)::float8 AS r
              FROM memories m, websearch_to_tsquery('english', ${tsq}) q
             WHERE ${where} AND m.content_tsv @@ q ORDER BY r DESC LIMIT ${fetch}) y`;
  }
  const wv = p(request.weights.vector);
  const wk = p(request.weights.keyword);
  const limit = p(request.limit);
  const rows = await db.q<MemoryRow & { _distance: number | null; _bm: number | null; _rrf: number }>(
    `WITH vec AS (${vec}), kw AS (${kw}),
     fused AS (
       SELECT COALESCE(vec.id, kw.id) AS id, vec.d, kw.r,
              COALESCE(${wv}::float8 / (${RRF_K} + vec.rnk), 0) + COALESCE(${wk}::float8 / (${RRF_K} + kw.rnk), 0) AS rrf
         FROM vec FULL OUTER JOIN kw ON vec.id = kw.id)
     SELECT m.*, fused.d AS _distance, fused.r AS _bm, fused.rrf AS _rrf
       FROM fused JOIN memories m ON m.id = fused.id AND m.api_key_id = $1
      ORDER BY fused.rrf DESC, m.id DESC LIMIT ${limit}`,
    params,
  );
  return rows.map((row) => ({
    memory: toRecord(row),
    score: row._distance === null ? null : 1 - row._distance,
    keywordScore: row._bm,
    rrf: row._rrf,
    source:
      row._distance !== null && row._bm !== null ? 'both' : row._distance !== null ? 'vector' : 'keyword',
  }));
}
