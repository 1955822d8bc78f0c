import type { PgClient } from '../../../store/index.ts';
import { type MemoryRow, toRecord } from './common.ts';
import { pgFilter, vectorLiteral } from './postgres-schema.ts';
import type { Candidate, SearchCandidates, SearchRequest } from './types.ts';

/** What the search and vector modules need from the store: plain queries and key-locked transactions. */
export interface PgAccess {
  q<T>(sql: string, params?: unknown[]): Promise<T[]>;
  tx<T>(apiKeyId: string | null, fn: (client: PgClient) => Promise<T>): Promise<T>;
}

/**
 * Every connection of the store, from its first statement (sent at connection startup): the
 * HNSW scan keeps going past rows of other keys and returns rows in exact distance order
 * (pgvector >= 0.8). A server whose pgvector is not loaded yet keeps it as a placeholder
 * setting, which the library adopts when it loads.
 */
export const PG_SESSION_SETTINGS: Record<string, string> = { 'hnsw.iterative_scan': 'strict_order' };

/** pgvector's upper bound for `hnsw.ef_search`, and its default (the floor here). */
const MAX_EF_SEARCH = 1000;
const EF_FLOOR = 40;
const EF_PER_FETCH = 5;

/**
 * The HNSW candidate list of a search fetching `fetch` rows: never under the LIMIT (which
 * pgvector's default of 40 was for every fetch over 40), and EF_PER_FETCH times it, because
 * the scan is filtered by key. pgvector costs a wider list higher, so where a key is a small
 * share of the table the planner reads that key's rows exactly instead: at ten keys of 100k
 * the default list found 0.17 of the exact top 10, this setting all of them (decision 1102).
 */
export function efSearchFor(fetch: number): number {
  return Math.min(MAX_EF_SEARCH, Math.max(fetch, EF_FLOOR, Math.ceil(fetch * EF_PER_FETCH)));
}

/**
 * Runs `fn` in a transaction whose HNSW scans use candidate lists of `ef`: `SET LOCAL` ends
 * with the transaction, so the pooled connection goes back with its session value.
 */
export function withEfSearch<T>(db: PgAccess, ef: number, fn: (client: PgClient) => Promise<T>): Promise<T> {
  return db.tx(null, async (client) => {
    await client.query("SELECT set_config('hnsw.ef_search', $1, true)", [String(ef)]);
    return fn(client);
  });
}

/**
 * Stores whose vector table is known to exist. It is created when a model is adopted and
 * only ever dropped and recreated in one transaction (a re-embed), so once seen it stays:
 * every search and supersession asked the server again, a round trip each.
 */
const withVectors = new WeakSet<PgAccess>();

export async function hasVectorTable(db: PgAccess): Promise<boolean> {
  if (withVectors.has(db)) return true;
  const [row] = await db.q<{ t: string | null }>("SELECT to_regclass('memory_vectors')::text AS t");
  if (row?.t != null) withVectors.add(db);
  return row?.t != null;
}

type CandidateRow = MemoryRow & {
  _cos: number | null;
  _kw: number | null;
  _vr: string | null;
  _kr: string | null;
};

/**
 * The candidates of a search in one statement: the pgvector cosine arm (HNSW with iterative
 * scans, the key filter inside) and the tsvector arm (`english` configuration), each ranked
 * on its own and scoped by the key, joined to their rows with every candidate's cosine.
 * The fused order is ranking.ts's job, the same as for SQLite.
 */
export async function pgSearch(
  db: PgAccess,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
): Promise<SearchCandidates> {
  const vectors = request.vector !== null && (await hasVectorTable(db));
  const useVector = request.mode !== 'keyword' && vectors;
  const useKeyword = request.mode !== 'vector' && request.words.length > 0;
  // The key's count, the stems' document counts and the candidates are independent: on a
  // pool they run on three connections at once instead of one after another.
  const [total, documentFrequency, candidates] = await Promise.all([
    db
      .q<{ n: string }>(
        'SELECT count(*) AS n FROM memories WHERE api_key_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
        [apiKeyId, now],
      )
      .then(([row]) => Number(row?.n ?? 0)),
    frequencies(db, apiKeyId, request, now),
    useVector || useKeyword ? pgCandidates(db, apiKeyId, request, now, vectors, useVector, useKeyword) : [],
  ]);
  return { candidates, total, documentFrequency };
}

/** The arms a search runs: `vectors` says the vector table exists (the cosine column needs it). */
export interface SearchArms {
  vectors: boolean;
  useVector: boolean;
  useKeyword: boolean;
}

/**
 * The candidates statement of a search and its parameters, as the store sends it (kept apart
 * so the plan of the store's own statement can be read with EXPLAIN). The key is `$1`, bound
 * as a value: the planner sees it, so a partial index on the key can serve the vector arm.
 */
export function candidateQuery(
  apiKeyId: string,
  request: SearchRequest,
  now: number,
  arms: SearchArms,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = pgFilter(apiKeyId, request.filter, now, params);
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const fetch = p(request.fetch);
  const qv = arms.vectors ? p(vectorLiteral(request.vector!)) : null;
  let vec = 'SELECT NULL::bigint AS id, NULL::bigint AS rnk WHERE false';
  if (arms.useVector) {
    vec = `SELECT id, row_number() OVER (ORDER BY d) AS rnk FROM (
             SELECT v.memory_id AS id, (v.embedding <=> ${qv}::vector)::float8 AS d
               FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
              WHERE v.api_key_id = $1 AND ${where}
              ORDER BY v.embedding <=> ${qv}::vector LIMIT ${fetch}) x`;
  }
  let kw = 'SELECT NULL::bigint AS id, NULL::float8 AS r, NULL::bigint AS rnk WHERE false';
  if (arms.useKeyword) {
    const tsq = p(request.words.join(' OR '));
    kw = `SELECT id, r, row_number() OVER (ORDER BY r DESC, id DESC) AS rnk FROM (
            SELECT m.id, ts_rank_cd(m.content_tsv, q)::float8 AS r
              FROM memories m, websearch_to_tsquery('english', ${tsq}) q
             WHERE ${where} AND m.content_tsv @@ q ORDER BY r DESC LIMIT ${fetch}) y`;
  }
  const cosine = arms.vectors
    ? `(SELECT 1 - (v.embedding <=> ${qv}::vector)::float8 FROM memory_vectors v WHERE v.memory_id = m.id)`
    : 'NULL::float8';
  const sql = `WITH vec AS (${vec}), kw AS (${kw}),
     found AS (SELECT COALESCE(vec.id, kw.id) AS id, vec.rnk AS vr, kw.rnk AS kr, kw.r
                 FROM vec FULL OUTER JOIN kw ON vec.id = kw.id)
     SELECT m.*, ${cosine} AS _cos, found.r AS _kw, found.vr AS _vr, found.kr AS _kr
       FROM found JOIN memories m ON m.id = found.id AND m.api_key_id = $1`;
  return { sql, params };
}

/** Both arms in one statement, joined to their rows with every candidate's cosine. */
async function pgCandidates(
  db: PgAccess,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
  vectors: boolean,
  useVector: boolean,
  useKeyword: boolean,
): Promise<Candidate[]> {
  const { sql, params } = candidateQuery(apiKeyId, request, now, { vectors, useVector, useKeyword });
  // Only a vector arm can use the HNSW index: a keyword search skips the transaction.
  const rows = useVector
    ? await withEfSearch(
        db,
        efSearchFor(request.fetch),
        async (client) => (await client.query(sql, params)).rows as CandidateRow[],
      )
    : await db.q<CandidateRow>(sql, params);
  return rows.map((row) => ({
    memory: toRecord(row),
    contentHash: row.content_hash,
    cosine: row._cos === null ? null : Number(row._cos),
    keywordScore: row._kw,
    vectorRank: row._vr === null ? null : Number(row._vr),
    keywordRank: row._kr === null ? null : Number(row._kr),
  }));
}

/**
 * Each query stem's document count in the key, counted through the tsvector index with the
 * word parsed by the `english` configuration (the stem itself is Porter's, see text.ts).
 */
async function frequencies(
  db: PgAccess,
  apiKeyId: string,
  request: SearchRequest,
  now: number,
): Promise<Record<string, number>> {
  if (request.words.length === 0) return {};
  const rows = await db.q<{ i: number; n: string }>(
    `SELECT w.i, (SELECT count(*) FROM memories m
                   WHERE m.api_key_id = $1 AND (m.expires_at IS NULL OR m.expires_at > $2)
                     AND m.content_tsv @@ plainto_tsquery('english', w.word)) AS n
       FROM unnest($3::text[]) WITH ORDINALITY AS w(word, i)`,
    [apiKeyId, now, request.words],
  );
  const out: Record<string, number> = {};
  for (const row of rows) out[request.stems[Number(row.i) - 1]!] = Number(row.n);
  return out;
}
