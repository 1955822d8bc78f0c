import { type MemoryRow, toRecord } from './common.ts';
import type { SqliteBitIndex } from './sqlite-bit-index.ts';
import type { DocumentFrequencies } from './sqlite-df-cache.ts';
import { narrowsBeyondKey, type SqlFragment, sqliteFilter } from './sqlite-filter.ts';
import { ftsQuery, ftsTerms } from './sqlite-fts.ts';
import { ROW_COLUMNS, rowsOf, type Statements } from './sqlite-rows.ts';
import { signBits } from './sqlite-schema.ts';
import type { Candidate, SearchCandidates, SearchRequest } from './types.ts';

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
  frequencies: DocumentFrequencies,
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
  const documentFrequency: Record<string, number> = {};
  if (terms.length > 0) {
    const counts = frequencies.of(terms);
    request.stems.forEach((stem, i) => {
      documentFrequency[stem] = counts[i]!;
    });
  }
  const qv = request.vector !== null && bitIndex !== null ? vectorBlob(request.vector) : null;
  const vec = useVector ? vectorArm(st, bitIndex!, apiKeyId, request, where, fetch, qv!) : [];
  const fts =
    request.mode !== 'vector'
      ? ftsQuery(keywordTerms(terms, request.stems, documentFrequency, fetch + KEYWORD_SLACK))
      : null;
  const kw = fts !== null ? keywordArm(st, request, where, fts, fetch) : { hits: [], rows: new Map() };
  const candidates: Candidate[] = vec.map((row, i) => ({
    memory: toRecord(row),
    contentHash: row.content_hash,
    cosine: 1 - row._d,
    keywordScore: null,
    vectorRank: i + 1,
    keywordRank: null,
  }));
  const byId = new Map(vec.map((row, i) => [row.id, candidates[i]!]));
  const more: MemoryRow[] = [];
  const rank = new Map<number, { score: number; rank: number }>();
  const unread: number[] = [];
  kw.hits.forEach((hit, i) => {
    const seen = byId.get(hit.id);
    if (seen) Object.assign(seen, { keywordScore: -hit.value, keywordRank: i + 1 });
    else {
      rank.set(hit.id, { score: -hit.value, rank: i + 1 });
      const row = kw.rows.get(hit.id);
      if (row) more.push(row);
      else unread.push(hit.id);
    }
  });
  // The keyword arm's own finds: rows it read for the filter are reused; only rows it did
  // not read (the exact path) are read here, and the vector arm's rows came with it.
  if (unread.length > 0) more.push(...readRows(st, apiKeyId, unread));
  const cosines = qv !== null && more.length > 0 ? cosinesOf(st, more, qv) : null;
  for (const row of more) {
    const { score, rank: keywordRank } = rank.get(row.id)!;
    candidates.push({
      memory: toRecord(row),
      contentHash: row.content_hash,
      cosine: cosines?.get(row.id) ?? null,
      keywordScore: score,
      vectorRank: null,
      keywordRank,
    });
  }
  return { candidates, total, documentFrequency };
}

const READ_ROWS = `SELECT ${ROW_COLUMNS} FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value WHERE m.api_key_id = @key`;

/** The key's rows of `ids`, in no particular order (expired and filtered rows included, as before). */
function readRows(st: Statements, apiKeyId: string, ids: number[]): MemoryRow[] {
  return rowsOf(
    st(READ_ROWS)
      .raw(true)
      .all({ ids: JSON.stringify(ids), key: apiKeyId }) as unknown[][],
  );
}

/** Cosine to the query of each row that has a float vector. */
function cosinesOf(st: Statements, rows: MemoryRow[], qv: Buffer): Map<number, number> {
  const found = st(
    `SELECT f.memory_id, 1 - vec_distance_cosine(f.embedding, @qv) FROM json_each(@ids) j
       CROSS JOIN memories_vec_float f ON f.memory_id = j.value`,
  )
    .raw(true)
    .all({ ids: JSON.stringify(rows.map((row) => row.id)), qv }) as [number, number][];
  return new Map(found);
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
  if (narrowsBeyondKey(request.filter)) {
    return st(
      `SELECT m.*, vec_distance_cosine(f.embedding, @qv) AS _d
         FROM memories m JOIN memories_vec_float f ON f.memory_id = m.id
        WHERE ${where.sql} ORDER BY _d LIMIT @fetch`,
    ).all({ ...where.params, qv, fetch }) as (MemoryRow & { _d: number })[];
  }
  const count = Math.min(Math.max(fetch * RERANK_FACTOR, MIN_CANDIDATES), MAX_CANDIDATES);
  const ids = bitIndex.candidates(apiKeyId, signBits(request.vector!), count);
  if (ids.length === 0) return [];
  // The re-rank reads the float vectors alone; only the nearest `fetch` (and more should
  // the filter drop some) are read from the memories table. Reading every candidate's row
  // with its vector was the largest phase of a search once ten 100k keys shared the file.
  const distances = st(
    `SELECT f.memory_id, vec_distance_cosine(f.embedding, @qv) FROM json_each(@ids) c
       CROSS JOIN memories_vec_float f ON f.memory_id = c.value`,
  )
    .raw(true)
    .all({ ids: JSON.stringify(ids), qv }) as [number, number][];
  // Stable: equal distances keep the bit index's order, as the sorter of one statement did.
  distances.sort((x, y) => x[1] - y[1]);
  const distance = new Map(distances);
  const rows = filteredRows(
    st,
    where,
    distances.map(([id]) => id),
    fetch,
  );
  return rows.map((row) => Object.assign(row, { _d: distance.get(row.id)! }));
}

/**
 * The rows of `ids` (best first) that pass the filter, at most `want`, in the order of
 * `ids`: the first `want` are read, then the rest only if the filter dropped some.
 */
function filteredRows(st: Statements, where: SqlFragment, ids: number[], want: number): MemoryRow[] {
  const read = st(
    `SELECT ${ROW_COLUMNS} FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value WHERE ${where.sql}`,
  ).raw(true);
  const byId = new Map<number, MemoryRow>();
  for (const chunk of [ids.slice(0, want), ids.slice(want)]) {
    if (chunk.length === 0) break;
    for (const row of rowsOf(read.all({ ...where.params, ids: JSON.stringify(chunk) }) as unknown[][]))
      byId.set(row.id, row);
    if (byId.size >= want) break;
  }
  const out: MemoryRow[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row && out.length < want) out.push(row);
  }
  return out;
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
): { hits: Ranked[]; rows: Map<number, MemoryRow> } {
  const exact = () => ({
    hits: st(
      `SELECT f.rowid AS id, bm25(memories_fts) AS value FROM memories_fts f JOIN memories m ON m.id = f.rowid
        WHERE memories_fts MATCH @fts AND ${where.sql} ORDER BY value LIMIT @fetch`,
    ).all({ ...where.params, fts, fetch }) as Ranked[],
    rows: new Map<number, MemoryRow>(),
  });
  if (narrowsBeyondKey(request.filter)) return exact();
  const top = st(
    'SELECT rowid AS id, bm25(memories_fts) AS value FROM memories_fts WHERE memories_fts MATCH ? ORDER BY value LIMIT ?',
  ).all(fts, fetch + KEYWORD_SLACK) as Ranked[];
  // The rows read for the filter are kept: the search needs them for the arm's own finds.
  const rows = new Map(
    filteredRows(
      st,
      where,
      top.map((hit) => hit.id),
      fetch,
    ).map((row) => [row.id, row]),
  );
  const hits = top.filter((hit) => rows.has(hit.id));
  if (hits.length < fetch && top.length === fetch + KEYWORD_SLACK) return exact();
  return { hits, rows };
}
