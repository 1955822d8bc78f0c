import type Database from 'better-sqlite3';
import { type MemoryRow, RRF_K, toRecord } from './common.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import { narrowsBeyondKey, type SqlFragment, sqliteFilter } from './sqlite-filter.ts';
import { ftsQuery } from './sqlite-fts.ts';
import { signBits } from './sqlite-schema.ts';
import type { SearchHit, SearchRequest } from './types.ts';

type Statements = (sql: string) => Database.Statement<unknown[]>;

// Every id list below is the outer loop of a CROSS JOIN: SQLite's planner cannot see how
// short a json_each list is and would otherwise walk the key's index with it inside.

/**
 * How many bit-index candidates are re-ranked by float cosine per row the vector arm
 * wants (limit × 4). This is the smallest factor that kept recall@10 against an exact
 * scan near 0.99 on USE-lite vectors of 10k WordNet definitions (k = 40: 0.94, 80: 0.986,
 * 120: 0.994, 320: 1.0); `npm run bench -- memory` reports the recall it gives at each size.
 */
export const RERANK_FACTOR = 3;
const MIN_CANDIDATES = 64;
const MAX_CANDIDATES = 4096;
/**
 * The keyword arm ranks this many more matches than it keeps before joining the memory
 * rows, so expired rows not yet purged rarely leave it short (it then reruns exactly).
 */
const KEYWORD_SLACK = 32;

interface Ranked {
  id: number;
  value: number;
}

/**
 * Hybrid search: FTS5 bm25 and vector cosine, each arm ranked on its own and scoped by the
 * key, fused by weighted reciprocal rank, then the winners' rows read by id within the key.
 */
export function sqliteSearch(
  st: Statements,
  bitIndex: SqliteBitIndex | null,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
): SearchHit[] {
  const where = sqliteFilter(apiKeyId, request.filter, now);
  const fetch = Math.min(request.limit * 4, MAX_CANDIDATES);
  const useVector = request.mode !== 'keyword' && request.vector !== null && bitIndex !== null;
  const fts =
    request.mode !== 'vector' && request.terms.length > 0 ? ftsQuery(apiKeyId, request.terms) : null;
  const vec = useVector ? vectorArm(st, bitIndex!, apiKeyId, request, where, fetch) : [];
  const kw = fts !== null ? keywordArm(st, request, where, fts, fetch) : [];
  if (vec.length === 0 && kw.length === 0) return [];

  const fused = new Map<number, { distance: number | null; bm: number | null; rrf: number }>();
  vec.forEach((hit, i) => {
    fused.set(hit.id, { distance: hit.value, bm: null, rrf: request.weights.vector / (RRF_K + i + 1) });
  });
  kw.forEach((hit, i) => {
    const rrf = request.weights.keyword / (RRF_K + i + 1);
    const both = fused.get(hit.id);
    if (both) {
      both.bm = hit.value;
      both.rrf += rrf;
    } else fused.set(hit.id, { distance: null, bm: hit.value, rrf });
  });
  const winners = [...fused.entries()]
    .sort(([a, x], [b, y]) => y.rrf - x.rrf || b - a)
    .slice(0, request.limit);
  const rows = new Map(
    (
      st(
        'SELECT m.* FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value WHERE m.api_key_id = @key',
      ).all({ ids: JSON.stringify(winners.map(([id]) => id)), key: apiKeyId }) as MemoryRow[]
    ).map((row) => [row.id, row]),
  );
  return winners.flatMap(([id, hit]) => {
    const row = rows.get(id);
    if (!row) return []; // deleted between the arms and this read
    return [
      {
        memory: toRecord(row),
        score: hit.distance === null ? null : 1 - hit.distance,
        keywordScore: hit.bm === null ? null : -hit.bm,
        rrf: hit.rrf,
        source:
          hit.distance !== null && hit.bm !== null ? 'both' : hit.distance !== null ? 'vector' : 'keyword',
      },
    ];
  });
}

/**
 * Nearest by cosine distance, at most `fetch`, within the score floor. Narrow filters scan
 * the matching rows' float vectors exactly. Otherwise the key's in-memory sign bits yield
 * candidates (Hamming distance) that float cosine re-ranks; a key with fewer vectors than
 * candidates is thereby searched exactly.
 */
function vectorArm(
  st: Statements,
  bitIndex: SqliteBitIndex,
  apiKeyId: string,
  request: SearchRequest,
  where: SqlFragment,
  fetch: number,
): Ranked[] {
  const vector = request.vector!;
  const params: Record<string, unknown> = {
    ...where.params,
    qv: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
    maxd: 1 - request.minScore,
    fetch,
  };
  let source: string;
  if (narrowsBeyondKey(request.filter)) {
    source = 'memories m JOIN memories_vec_float f ON f.memory_id = m.id';
  } else {
    const count = Math.min(Math.max(fetch * RERANK_FACTOR, MIN_CANDIDATES), MAX_CANDIDATES);
    const ids = bitIndex.candidates(apiKeyId, signBits(vector), count);
    if (ids.length === 0) return [];
    params.ids = JSON.stringify(ids);
    source = `json_each(@ids) c CROSS JOIN memories_vec_float f ON f.memory_id = c.value
              CROSS JOIN memories m ON m.id = f.memory_id`;
  }
  return st(
    `SELECT id, value FROM (
       SELECT f.memory_id AS id, vec_distance_cosine(f.embedding, @qv) AS value FROM ${source}
        WHERE ${where.sql} ORDER BY value LIMIT @fetch)
      WHERE value <= @maxd`,
  ).all(params) as Ranked[];
}

/**
 * bm25 order, at most `fetch`. The matches are ranked in the index alone first and only the
 * top ones joined to their rows for the filter: joining every match cost up to 25 ms on
 * words found in thousands of a key's memories. Narrow filters, or a top cut short by
 * filtered rows while more matched, take the exact path that joins every match.
 */
function keywordArm(
  st: Statements,
  request: SearchRequest,
  where: SqlFragment,
  fts: string,
  fetch: number,
): Ranked[] {
  const exact = () =>
    st(
      `SELECT f.rowid AS id, bm25(memories_fts) AS value FROM memories_fts f JOIN memories m ON m.id = f.rowid
        WHERE memories_fts MATCH @fts AND ${where.sql} ORDER BY value LIMIT @fetch`,
    ).all({ ...where.params, fts, fetch }) as Ranked[];
  if (narrowsBeyondKey(request.filter)) return exact();
  const top = st(
    'SELECT rowid AS id, bm25(memories_fts) AS value FROM memories_fts WHERE memories_fts MATCH ? ORDER BY value LIMIT ?',
  ).all(fts, fetch + KEYWORD_SLACK) as Ranked[];
  const kept = new Set(
    st(`SELECT m.id FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value WHERE ${where.sql}`)
      .pluck(true)
      .all({ ...where.params, ids: JSON.stringify(top.map((hit) => hit.id)) }) as number[],
  );
  const hits = top.filter((hit) => kept.has(hit.id));
  if (hits.length < fetch && top.length === fetch + KEYWORD_SLACK) return exact();
  return hits.slice(0, fetch);
}
