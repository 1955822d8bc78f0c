/**
 * Search latency and vector recall on the Postgres store: a native PostgreSQL 18.6 with
 * pgvector 0.8.6 (dev/postgres, a private server in a temporary data dir), queried through
 * the product's PostgresMemoryStore and `pg` driver, as a gateway on DATABASE_URL does.
 *
 * The key is filled in batches by SQL (one multi-row INSERT per 1,000 memories, then their
 * vectors), not through memory_write, and the HNSW index is built once over all of them.
 * The rows are what the store writes (the same columns and the generated tsvector). The
 * full run uses 10k unless `--pg-size 100000` asks for more.
 */
import { randomUUID } from 'node:crypto';
import { LOCAL_MODEL } from '../gateway/namespaces/memory/embeddings/types.ts';
import { contentHash } from '../gateway/namespaces/memory/store/common.ts';
import { vectorLiteral } from '../gateway/namespaces/memory/store/postgres-schema.ts';
import { PostgresMemoryStore } from '../gateway/namespaces/memory/store/postgres-store.ts';
import type { MemoryStore, SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import { createPgPool } from '../gateway/store/index.ts';
import { startOwnPostgres } from '../test/support/own-postgres.ts';
import {
  type CorpusVectors,
  exactTopK,
  type Ledger,
  rankedSearch,
  searchRequest,
} from './memory-fixtures.ts';
import type { LatencyRow, Query, RecallRow } from './memory-latency.ts';
import { percentile } from './stats.ts';

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const BATCH = 1_000;
const VECTOR_BATCH = 100;

async function fillByBatches(
  url: string,
  key: string,
  texts: string[],
  size: number,
  vectors: CorpusVectors,
  ledger: Ledger,
  log: (line: string) => void,
): Promise<void> {
  const pool = createPgPool(url, { max: 1 });
  try {
    // The HNSW index is built after the rows: inserting 100k vectors into it one by one in
    // WebAssembly costs several times a single build.
    await pool.query('DROP INDEX IF EXISTS memory_vectors_hnsw');
    const seen = new Set<string>();
    const now = Date.now();
    for (let from = 0; from < size; from += BATCH) {
      const rows: { id: string; text: string; hash: string; row: number }[] = [];
      for (let row = from; row < Math.min(size, from + BATCH); row++) {
        const text = texts[row]!;
        const hash = contentHash(text);
        // Exact dedup, as memory_write does: WordNet repeats a few texts.
        if (seen.has(hash)) continue;
        seen.add(hash);
        rows.push({ id: randomUUID(), text, hash, row });
      }
      const inserted = await pool.query(
        `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status, created_at, updated_at)
         SELECT p, $1, 'default', c, h, 'ready', $2, $2 FROM unnest($3::uuid[], $4::text[], $5::text[]) AS t(p, c, h)
         RETURNING id, public_id`,
        [key, now, rows.map((r) => r.id), rows.map((r) => r.text), rows.map((r) => r.hash)],
      );
      const idOf = new Map(inserted.rows.map((r: { id: string; public_id: string }) => [r.public_id, r.id]));
      // A hundred vectors a statement: one round trip per hundred.
      for (let at = 0; at < rows.length; at += VECTOR_BATCH) {
        const some = rows.slice(at, at + VECTOR_BATCH);
        await pool.query(
          `INSERT INTO memory_vectors (memory_id, api_key_id, embedding)
           SELECT i, $1, v::vector FROM unnest($2::bigint[], $3::text[]) AS t(i, v)`,
          [key, some.map((r) => idOf.get(r.id)), some.map((r) => vectorLiteral(vectors.get(r.row)))],
        );
      }
      for (const r of rows) ledger.add(r.id, key, r.row);
      if ((from / BATCH) % 20 === 19) log(`memory (postgres): ${from + BATCH} rows stored`);
    }
    log('memory (postgres): building the HNSW index');
    await pool.query('SET maintenance_work_mem = 1048576');
    await pool.query(
      'CREATE INDEX memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops)',
    );
    await pool.query('ANALYZE memories');
    await pool.query('ANALYZE memory_vectors');
  } finally {
    await pool.end();
  }
}

async function timeSearches(
  store: MemoryStore,
  key: string,
  queries: Query[],
  mode: SearchMode,
  ledger: Ledger,
): Promise<{ p50Ms: number; p99Ms: number }> {
  const run = async (q: Query) => {
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
  for (const q of queries.slice(0, 10)) await run(q);
  const times: number[] = [];
  for (const q of queries) times.push(await run(q));
  times.sort((a, b) => a - b);
  return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
}

/** One key of `size` memories on the native server: latency per mode and vector recall@10 against an exact scan. */
export async function benchPgSearch(
  texts: string[],
  vectors: CorpusVectors,
  queries: Query[],
  size: number,
  recallQueries: number,
  ledger: Ledger,
  log: (line: string) => void,
): Promise<{ latency: LatencyRow[]; recall: RecallRow[] }> {
  const pg = await startOwnPostgres();
  const store = new PostgresMemoryStore(pg.url, { max: 4 });
  const key = 'bench-pg-key-0';
  try {
    if (!(await store.adoptEmbeddingModel(LOCAL_MODEL))) throw new Error('store holds another model');
    log(`memory (postgres): filling ${key} with ${size} memories by SQL batches`);
    const started = Date.now();
    await fillByBatches(pg.url, key, texts, size, vectors, ledger, log);
    log(`memory (postgres): filled in ${Math.round((Date.now() - started) / 1000)} s`);
    const latency: LatencyRow[] = [];
    for (const mode of ['hybrid', 'keyword', 'vector'] as const) {
      const figures = await timeSearches(store, key, queries, mode, ledger);
      latency.push({ perKey: size, keys: 1, mode, ...figures, queries: queries.length });
      log(`memory (postgres): ${size}/key ${mode}: p50 ${figures.p50Ms} p99 ${figures.p99Ms} ms`);
    }
    let found = 0;
    let wanted = 0;
    for (const q of queries.slice(0, recallQueries)) {
      const hits = await rankedSearch(store, key, searchRequest(q.text, q.vector, 'vector'));
      const exact = new Set(exactTopK(vectors, size, q.vector, 10));
      wanted += exact.size;
      found += hits.filter((h) => exact.has(ledger.row(h.memory.id))).length;
    }
    const recall = [
      {
        perKey: size,
        keys: 1,
        recallAt10: round(found / wanted, 3),
        queries: Math.min(queries.length, recallQueries),
      },
    ];
    log(`memory (postgres): ${size}/key vector recall@10 vs exact ${recall[0]!.recallAt10}`);
    return { latency, recall };
  } finally {
    await store.close();
    await pg.close();
  }
}
