/**
 * Store-level figures on SQLite: insert throughput, search latency per mode at each size
 * (one key alone, then ten keys of that size in the same file), and recall@10 of the
 * vector path (bit index + float re-rank) against an exact scan. Query embedding is not
 * in these latencies; it is measured on its own.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainWrite } from '../gateway/namespaces/memory/store/common.ts';
import { SqliteMemoryStore } from '../gateway/namespaces/memory/store/sqlite-store.ts';
import type { SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import { Database } from '../gateway/store/sqlite-driver.ts';
import {
  type CorpusVectors,
  cloneKey,
  exactTopK,
  fillKey,
  type Ledger,
  rankedSearch,
  recallAt10,
  searchRequest,
} from './memory-fixtures.ts';
import type { VectorSet } from './memory-vectors.ts';
import { percentile } from './stats.ts';

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface InsertFigures {
  rows: number;
  writesPerSecond: number;
  writesPerSecondAtCap: number;
  vectorsPerSecond: number;
}

/** Single-row transactions as the tools issue them, on a fresh store. */
export async function benchInserts(
  texts: string[],
  vectors: CorpusVectors,
  rows: number,
  ledger: Ledger,
): Promise<InsertFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-bench-memory-insert-'));
  const store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
  try {
    const { writeMs, embedMs } = await fillKey(store, 'insert-key', texts, 0, rows, vectors, ledger);
    // Steady state at the default cap of 1000: every write also evicts the oldest memory.
    const capped = 'capped-key';
    for (let row = 0; row < 1000; row++) await store.write(capped, plainWrite(texts[row]!), 1000, Date.now());
    const started = performance.now();
    for (let row = 1000; row < 1000 + rows; row++) {
      await store.write(capped, plainWrite(texts[row % texts.length]!), 1000, Date.now());
    }
    const cappedMs = performance.now() - started;
    return {
      rows,
      writesPerSecond: Math.round(rows / (writeMs / 1000)),
      writesPerSecondAtCap: Math.round(rows / (cappedMs / 1000)),
      vectorsPerSecond: Math.round(rows / (embedMs / 1000)),
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export interface LatencyRow {
  perKey: number;
  keys: number;
  mode: SearchMode;
  p50Ms: number;
  p99Ms: number;
  queries: number;
}

export interface RecallRow {
  perKey: number;
  keys: number;
  recallAt10: number;
  queries: number;
}

export interface Query {
  text: string;
  vector: Float32Array;
}

async function timeSearches(
  store: SqliteMemoryStore,
  keys: string[],
  queries: Query[],
  mode: SearchMode,
  ledger: Ledger,
): Promise<{ p50Ms: number; p99Ms: number }> {
  const run = async (q: Query, i: number) => {
    const key = keys[i % keys.length]!;
    const started = performance.now();
    // Current memories only, as memory_search asks unless include_superseded is given.
    const request = searchRequest(q.text, q.vector, mode, { filter: { currentOnly: true } });
    const hits = await rankedSearch(store, key, request);
    const ms = performance.now() - started;
    ledger.check(
      key,
      hits.map((h) => h.memory.id),
    );
    return ms;
  };
  // Ten searches a key before timing, as the one-key layout gets: one a key left the ten-key
  // rows' first pass (page cache, each key's first scans) inside the timing.
  for (const [i, q] of queries.slice(0, 10 * keys.length).entries()) await run(q, i);
  const times: number[] = [];
  for (const [i, q] of queries.entries()) times.push(await run(q, i));
  times.sort((a, b) => a - b);
  return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
}

async function recallAgainstExact(
  store: SqliteMemoryStore,
  keys: string[],
  queries: Query[],
  vectors: CorpusVectors,
  perKey: number,
  ledger: Ledger,
): Promise<number> {
  return recallAt10(
    store,
    keys,
    queries,
    ledger,
    (_key, vector) => new Set(exactTopK(vectors, perKey, vector, 10)),
    (id) => ledger.row(id),
  );
}

/**
 * Copies the WAL into the database file before the next timing. The copy of nine keys is
 * one transaction of several GB (at 100k a key, 4.3 GB of WAL), which no store written
 * through the tools ever commits; left alone, the store's checkpointer thread copies it
 * while the first mode after the copy is timed, and that row alone pays for it on 2 cores.
 * The one-key row's fill was checkpointed as it went.
 */
function settleWal(file: string): void {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 60000');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/**
 * For each size: fill one key, measure; add nine more keys of the same size to the same
 * file, measure again (queries rotate over the ten keys).
 */
export async function benchSearch(
  texts: string[],
  vectors: CorpusVectors,
  queryVectors: VectorSet,
  queryTexts: string[],
  sizes: number[],
  plan: { queries: number; recallQueries: number },
  ledger: Ledger,
  log: (line: string) => void,
): Promise<{ latency: LatencyRow[]; recall: RecallRow[]; bytesPerMemory: number }> {
  const queries: Query[] = queryTexts
    .slice(0, plan.queries)
    .map((text, i) => ({ text, vector: queryVectors.row(i) }));
  const latency: LatencyRow[] = [];
  const recall: RecallRow[] = [];
  let bytesPerMemory = 0;
  for (const perKey of sizes) {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-bench-memory-search-'));
    const file = join(dir, 'memory.sqlite');
    const store = new SqliteMemoryStore(file);
    try {
      const keys = ['bench-key-0'];
      log(`memory: filling ${keys[0]} with ${perKey} memories through the store`);
      await fillKey(store, keys[0]!, texts, 0, perKey, vectors, ledger);
      for (const layout of [1, 10]) {
        if (layout > keys.length) {
          const more = Array.from({ length: layout - keys.length }, (_, i) => `bench-key-${keys.length + i}`);
          log(`memory: copying bench-key-0 to ${more.length} more keys`);
          cloneKey(file, keys[0]!, more, ledger);
          settleWal(file);
          keys.push(...more);
        }
        for (const mode of ['hybrid', 'keyword', 'vector'] as const) {
          const figures = await timeSearches(store, keys, queries, mode, ledger);
          latency.push({ perKey, keys: keys.length, mode, ...figures, queries: queries.length });
          log(
            `memory: ${perKey}/key × ${keys.length} keys ${mode}: p50 ${figures.p50Ms} p99 ${figures.p99Ms} ms`,
          );
        }
        const recallAt10 = await recallAgainstExact(
          store,
          keys,
          queries.slice(0, plan.recallQueries),
          vectors,
          perKey,
          ledger,
        );
        recall.push({
          perKey,
          keys: keys.length,
          recallAt10,
          queries: Math.min(queries.length, plan.recallQueries),
        });
        log(`memory: ${perKey}/key × ${keys.length} keys vector recall@10 vs exact ${recallAt10}`);
      }
      // WordNet repeats a few "lemmas: definition" texts; exact dedup stores them once.
      const distinct = new Set(texts.slice(0, perKey)).size;
      for (const key of keys) {
        const { count } = await store.stats(key, Date.now());
        if (count !== distinct) throw new Error(`${key} holds ${count} memories, expected ${distinct}`);
      }
      await store.close();
      const bytes = (await stat(file)).size + (await stat(`${file}-wal`).catch(() => ({ size: 0 }))).size;
      bytesPerMemory = Math.round(bytes / (perKey * keys.length));
    } finally {
      await store.close().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { latency, recall, bytesPerMemory };
}
