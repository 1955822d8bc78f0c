import type Database from 'better-sqlite3';
import { type MemoryRow, toRecord } from './common.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import { narrowsBeyondKey, type SqlFragment, sqliteFilter } from './sqlite-filter.ts';
import { ftsQuery, ftsTerms } from './sqlite-fts.ts';
import { signBits } from './sqlite-schema.ts';
import type { Candidate, SearchCandidates, SearchRequest } from './types.ts';

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
/** How many postings (term occurrences in the key's memories) the keyword arm scores before it leaves out common terms. */
const KEYWORD_POSTINGS = 4096;

interface Ranked {
  id: number;
  value: number;
}

/**
 * The candidates of a search: the vector arm's nearest (by cosine) and the keyword arm's
 * best (by FTS5 bm25), each ranked on its own and scoped by the key, read by id within the
 * key with every candidate's cosine; the fused order is ranking.ts's job. Also the key's
 * memory count and each query stem's document count within the key, for keyword relevance.
 */
export function sqliteSearch(
  st: Statements,
  bitIndex: SqliteBitIndex | null,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
): SearchCandidates {
  const where = sqliteFilter(apiKeyId, request.filter, now);
  const fetch = Math.min(request.fetch, MAX_CANDIDATES);
  const useVector = request.mode !== 'keyword' && request.vector !== null && bitIndex !== null;
  const terms = ftsTerms(apiKeyId, request.stems);
  const total =
    (st('SELECT n FROM memory_key_counts WHERE api_key_id = ?').get(apiKeyId) as { n: number } | undefined)
      ?.n ?? 0;
  const documentFrequency = frequencies(st, request.stems, terms);
  const qv = request.vector !== null && bitIndex !== null ? vectorBlob(request.vector) : null;
  const vec = useVector ? vectorArm(st, bitIndex!, apiKeyId, request, where, fetch, qv!) : [];
  const fts =
    request.mode !== 'vector'
      ? ftsQuery(keywordTerms(terms, request.stems, documentFrequency, fetch + KEYWORD_SLACK))
      : null;
  const kw = fts !== null ? keywordArm(st, request, where, fts, fetch) : [];
  const candidates: Candidate[] = vec.map((row, i) => ({
    memory: toRecord(row),
    cosine: 1 - row._d,
    keywordScore: null,
    vectorRank: i + 1,
    keywordRank: null,
  }));
  const byId = new Map(vec.map((row, i) => [row.id, candidates[i]!]));
  const more: Ranked[] = [];
  kw.forEach((hit, i) => {
    const seen = byId.get(hit.id);
    if (seen) Object.assign(seen, { keywordScore: -hit.value, keywordRank: i + 1 });
    else more.push(hit);
  });
  // Only the keyword arm's own finds are read here: the vector arm's rows came with it.
  if (more.length > 0) {
    const ids = JSON.stringify(more.map((hit) => hit.id));
    const rows = (
      qv !== null
        ? st(
            `SELECT m.*, CASE WHEN f.embedding IS NULL THEN NULL ELSE 1 - vec_distance_cosine(f.embedding, @qv) END AS _cos
               FROM json_each(@ids) j
               CROSS JOIN memories m ON m.id = j.value LEFT JOIN memories_vec_float f ON f.memory_id = m.id
              WHERE m.api_key_id = @key`,
          ).all({ ids, key: apiKeyId, qv })
        : st(
            'SELECT m.*, NULL AS _cos FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value WHERE m.api_key_id = @key',
          ).all({ ids, key: apiKeyId })
    ) as (MemoryRow & { _cos: number | null })[];
    const rank = new Map(kw.map((hit, i) => [hit.id, { score: -hit.value, rank: i + 1 }]));
    for (const row of rows) {
      const { score, rank: keywordRank } = rank.get(row.id)!;
      candidates.push({
        memory: toRecord(row),
        cosine: row._cos,
        keywordScore: score,
        vectorRank: null,
        keywordRank,
      });
    }
  }
  return { candidates, total, documentFrequency };
}

function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * The terms the keyword arm matches: all of them unless their document counts in the key
 * add up to more than KEYWORD_POSTINGS. Then the most common are left out, as long as
 * what is kept can fill the arm on its own (a kept term occurs in at least `need`).
 * FTS5 scores every memory that holds any term, so a stem like `in` (from "inning") or
 * `us` (from "used"), held by a fifth of a 100k key, cost up to 19 ms a search for
 * candidates that rank by their rare terms anyway. Ranking still weighs every query stem
 * (keyword relevance reads the candidate's text), so a memory found by its rare words keeps
 * the credit for the common ones; only memories holding nothing but common words are no
 * longer offered by this arm. A query keeps at most 64 stems, so keys of 64 memories or
 * fewer never reach the budget.
 */
export function keywordTerms(
  terms: string[],
  stems: string[],
  documentFrequency: Record<string, number>,
  need: number,
): string[] {
  const df = (i: number) => documentFrequency[stems[i]!] ?? 0;
  let sum = 0;
  for (let i = 0; i < terms.length; i++) sum += df(i);
  if (sum <= KEYWORD_POSTINGS) return terms;
  const order = terms.map((_, i) => i).sort((a, b) => df(a) - df(b));
  const kept: number[] = [];
  let postings = 0;
  for (const i of order) {
    const full = kept.length > 0 && df(kept.at(-1)!) >= need;
    if (full && postings + df(i) > KEYWORD_POSTINGS) break;
    kept.push(i);
    postings += df(i);
  }
  return kept.sort((a, b) => a - b).map((i) => terms[i]!);
}

/** Each stem's document count in the key: its tagged term's row in the vocabulary table. */
function frequencies(st: Statements, stems: string[], terms: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  if (stems.length === 0) return out;
  const found = new Map(
    (
      st('SELECT term, doc FROM memories_fts_vocab WHERE term IN (SELECT value FROM json_each(?))').all(
        JSON.stringify(terms),
      ) as { term: string; doc: number }[]
    ).map((row) => [row.term, row.doc]),
  );
  stems.forEach((stem, i) => {
    out[stem] = found.get(terms[i]!) ?? 0;
  });
  return out;
}

/**
 * Nearest by cosine distance, at most `fetch`, with their rows. Narrow filters scan the
 * matching rows' float vectors exactly. Otherwise the key's in-memory sign bits yield
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
  qv: Buffer,
): (MemoryRow & { _d: number })[] {
  const params: Record<string, unknown> = { ...where.params, qv, fetch };
  let source: string;
  if (narrowsBeyondKey(request.filter)) {
    source = 'memories m JOIN memories_vec_float f ON f.memory_id = m.id';
  } else {
    const count = Math.min(Math.max(fetch * RERANK_FACTOR, MIN_CANDIDATES), MAX_CANDIDATES);
    const ids = bitIndex.candidates(apiKeyId, signBits(request.vector!), count);
    if (ids.length === 0) return [];
    params.ids = JSON.stringify(ids);
    source = `json_each(@ids) c CROSS JOIN memories_vec_float f ON f.memory_id = c.value
              CROSS JOIN memories m ON m.id = f.memory_id`;
  }
  return st(
    `SELECT m.*, vec_distance_cosine(f.embedding, @qv) AS _d FROM ${source}
      WHERE ${where.sql} ORDER BY _d LIMIT @fetch`,
  ).all(params) as (MemoryRow & { _d: number })[];
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
