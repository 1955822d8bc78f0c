/**
 * Search latency and vector recall on the Postgres store: a native PostgreSQL 18.6 with
 * pgvector 0.8.6 (dev/postgres, a private server in a temporary data dir), queried through
 * the product's PostgresMemoryStore and `pg` driver, as a gateway on DATABASE_URL does.
 *
 * Two layouts, as the SQLite rows: one key of `perKey` memories alone in the table, then as
 * many keys of that size as make `total` rows (the full run: 100k a key, 1M in the table).
 * Keys are loaded by SQL batches and the HNSW index is built once over the whole table
 * (memory-pg-load.ts), its build timed. Queries rotate over the keys. Recall@10 of the
 * product's vector search is measured against an exact cosine scan of the same key's stored
 * vectors, run by the server with the HNSW index turned off.
 */
import { LOCAL_MODEL } from '../gateway/namespaces/memory/embeddings/types.ts';
import { vectorLiteral } from '../gateway/namespaces/memory/store/postgres-schema.ts';
import { PostgresMemoryStore } from '../gateway/namespaces/memory/store/postgres-store.ts';
import type { MemoryStore, SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import { createPgPool } from '../gateway/store/index.ts';
import { startOwnPostgres } from '../test/support/own-postgres.ts';
import {
  type CorpusVectors,
  type Ledger,
  rankedSearch,
  recallAt10,
  searchRequest,
} from './memory-fixtures.ts';
import type { LatencyRow, Query, RecallRow } from './memory-latency.ts';
import { growTable, keyName, type LoadFigures } from './memory-pg-load.ts';
import { percentile } from './stats.ts';

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface PgScalePlan {
  perKey: number;
  /** Memories in the table at the largest layout: a multiple of perKey. */
  total: number;
  recallQueries: number;
  indexBudgetSeconds: number;
}

async function timeSearches(
  store: MemoryStore,
  keys: string[],
  queries: Query[],
  mode: SearchMode,
  ledger: Ledger,
): Promise<{ p50Ms: number; p99Ms: number }> {
  const run = async (q: Query, i: number) => {
    const key = keys[i % keys.length]!;
    const started = performance.now();
    const hits = await rankedSearch(
      store,
      key,
      searchRequest(q.text, q.vector, mode, { filter: { currentOnly: true } }),
    );
    const ms = performance.now() - started;
    ledger.check(
      key,
      hits.map((h) => h.memory.id),
    );
    return ms;
  };
  // Ten searches a key first, as the SQLite rows get.
  for (const [i, q] of queries.slice(0, 10 * keys.length).entries()) await run(q, i);
  const times: number[] = [];
  for (const [i, q] of queries.entries()) times.push(await run(q, i));
  times.sort((a, b) => a - b);
  return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
}

/** The exact top 10 of a key by cosine, scanned by the server without the HNSW index. */
async function exactTop10(
  pool: ReturnType<typeof createPgPool>,
  key: string,
  vector: Float32Array,
): Promise<Set<string>> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_indexscan = off');
    const { rows } = await client.query(
      `SELECT m.public_id FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
        WHERE v.api_key_id = $1 ORDER BY v.embedding <=> $2::vector LIMIT 10`,
      [key, vectorLiteral(vector)],
    );
    await client.query('COMMIT');
    return new Set(rows.map((r: { public_id: string }) => r.public_id));
  } finally {
    client.release();
  }
}

async function recallAgainstExact(
  url: string,
  store: MemoryStore,
  keys: string[],
  queries: Query[],
  ledger: Ledger,
): Promise<number> {
  const pool = createPgPool(url, { max: 1, queryTimeoutMs: 120_000 });
  try {
    return await recallAt10(
      store,
      keys,
      queries,
      ledger,
      (key, vector) => exactTop10(pool, key, vector),
      (id) => id,
    );
  } finally {
    await pool.end();
  }
}

/**
 * The per-key indexes the store builds for a key over its threshold once searched
 * (decision 1103), built before any search is timed: the rows measure a store that has them.
 * The store builds with the server's `maintenance_work_mem`; the bench's server gets the
 * 1 GB an operator of keys this size would give it (64 MB holds no graph of 50k 512-d vectors).
 */
async function buildKeyIndexes(
  url: string,
  store: PostgresMemoryStore,
  keys: string[],
  log: (line: string) => void,
): Promise<void> {
  const admin = createPgPool(url, { max: 1 });
  try {
    await admin.query("ALTER SYSTEM SET maintenance_work_mem = '1GB'");
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
  for (const key of keys) {
    const started = Date.now();
    const outcome = await store.keyIndexes.ensure(key);
    if (outcome === 'built')
      log(`memory (postgres): ${key}'s own HNSW index built in ${(Date.now() - started) / 1000} s`);
    else if (outcome === 'failed') throw new Error(`the per-key index of ${key} was not built`);
  }
}

/**
 * Each layout: grow the table, rebuild the index, then latency per mode and recall. A
 * layout whose index build passes its budget is reported with its load figures only, and
 * the larger layouts are not tried.
 */
export async function benchPgSearch(
  texts: string[],
  vectors: CorpusVectors,
  queries: Query[],
  plan: PgScalePlan,
  ledger: Ledger,
  log: (line: string) => void,
): Promise<{ latency: LatencyRow[]; recall: RecallRow[]; loads: LoadFigures[] }> {
  if (plan.total % plan.perKey !== 0)
    throw new Error('the Postgres table size must be a multiple of its key size');
  const pg = await startOwnPostgres();
  const store = new PostgresMemoryStore(pg.url, { max: 4 });
  const latency: LatencyRow[] = [];
  const recall: RecallRow[] = [];
  const loads: LoadFigures[] = [];
  try {
    if (!(await store.adoptEmbeddingModel(LOCAL_MODEL))) throw new Error('store holds another model');
    let loadedKeys = 0;
    for (const layout of [...new Set([1, plan.total / plan.perKey])]) {
      const load = await growTable(
        pg.url,
        {
          perKey: plan.perKey,
          fromKey: loadedKeys,
          toKey: layout,
          indexBudgetSeconds: plan.indexBudgetSeconds,
        },
        texts,
        vectors,
        ledger,
        log,
      );
      loadedKeys = layout;
      loads.push(load);
      if (load.indexSeconds === null) break;
      const keys = Array.from({ length: layout }, (_, k) => keyName(k));
      await buildKeyIndexes(pg.url, store, keys, log);
      for (const mode of ['hybrid', 'keyword', 'vector'] as const) {
        const figures = await timeSearches(store, keys, queries, mode, ledger);
        latency.push({ perKey: plan.perKey, keys: layout, mode, ...figures, queries: queries.length });
        log(
          `memory (postgres): ${plan.perKey}/key × ${layout} keys ${mode}: p50 ${figures.p50Ms} p99 ${figures.p99Ms} ms`,
        );
      }
      const sample = queries.slice(0, plan.recallQueries);
      const recallAt10 = await recallAgainstExact(pg.url, store, keys, sample, ledger);
      recall.push({ perKey: plan.perKey, keys: layout, recallAt10, queries: sample.length });
      log(`memory (postgres): ${plan.perKey}/key × ${layout} keys HNSW recall@10 vs exact ${recallAt10}`);
    }
    return { latency, recall, loads };
  } finally {
    await store.close();
    await pg.close();
  }
}
