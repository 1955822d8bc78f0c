/**
 * Stores filled through the product's own store API (write, then setEmbedding as the
 * indexer would), and the bookkeeping the checks need: which key owns each memory id and
 * which corpus row it holds.
 */
import { LOCAL_MODEL } from '../gateway/namespaces/memory/embeddings/types.ts';
import { type RankedHit, rankCandidates } from '../gateway/namespaces/memory/ranking.ts';
import { SEARCH_DEFAULTS } from '../gateway/namespaces/memory/settings.ts';
import { contentHash, plainWrite } from '../gateway/namespaces/memory/store/common.ts';
import { registerMemoryFunctions } from '../gateway/namespaces/memory/store/sqlite-fts.ts';
import { queryWords } from '../gateway/namespaces/memory/store/text.ts';
import type { MemoryStore, SearchRequest } from '../gateway/namespaces/memory/store/types.ts';
import { Database } from '../gateway/store/sqlite-driver.ts';
import { seeded } from './memory-data.ts';
import type { VectorSet } from './memory-vectors.ts';

export const NO_CAP = 10_000_000;

/** Owner key and corpus row of every memory id written. */
export class Ledger {
  private readonly owners = new Map<string, { key: string; row: number }>();
  foreignHits = 0;
  checkedHits = 0;
  checkedQueries = 0;

  add(id: string, key: string, row: number): void {
    this.owners.set(id, { key, row });
  }

  row(id: string): number {
    return this.owners.get(id)?.row ?? -1;
  }

  /** The isolation check run on every benchmark query: a hit of another key fails the run. */
  check(key: string, ids: string[]): void {
    this.checkedQueries++;
    for (const id of ids) {
      this.checkedHits++;
      if (this.owners.get(id)?.key !== key) this.foreignHits++;
    }
  }
}

/** A vector for every corpus row: the real ones where cached, derived ones past them. */
export class CorpusVectors {
  private readonly derivedCache = new Map<number, Float32Array>();

  constructor(
    readonly real: VectorSet,
    readonly realCount: number,
  ) {}

  /**
   * Rows past the real ones get a real row's vector plus seeded Gaussian noise (cosine to
   * it about 0.8), so scan cost and neighbourhood structure stay realistic without
   * embedding 100k texts; these rows serve latency and ANN recall, never quality.
   */
  get(row: number): Float32Array {
    if (row < this.realCount) return this.real.row(row);
    const hit = this.derivedCache.get(row);
    if (hit) return hit;
    const base = this.real.row(row % this.realCount);
    const random = seeded(row * 2_654_435_761);
    const out = new Float32Array(base.length);
    let norm = 0;
    for (let i = 0; i < base.length; i++) {
      // Box–Muller; 0.033 per component gives a noise vector of norm about 0.75 at 512-d.
      const g = Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
      out[i] = base[i]! + g * 0.033;
      norm += out[i]! * out[i]!;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < out.length; i++) out[i]! /= norm;
    if (this.derivedCache.size < 200_000) this.derivedCache.set(row, out);
    return out;
  }
}

/**
 * Writes corpus rows [from, to) under `key` and stores their vectors. Returns elapsed
 * milliseconds of the writes and of the vector stores separately.
 */
export async function fillKey(
  store: MemoryStore,
  key: string,
  texts: string[],
  from: number,
  to: number,
  vectors: CorpusVectors,
  ledger: Ledger,
): Promise<{ writeMs: number; embedMs: number }> {
  // As the indexer does before its first vector; a no-op once adopted.
  if (!(await store.adoptEmbeddingModel(LOCAL_MODEL))) throw new Error('store holds another model');
  const byHash = new Map<string, number>();
  let started = performance.now();
  for (let row = from; row < to; row++) {
    const text = texts[row]!;
    const { memory } = await store.write(key, plainWrite(text), NO_CAP, Date.now());
    ledger.add(memory.id, key, row);
    byHash.set(contentHash(text), row);
  }
  const writeMs = performance.now() - started;
  started = performance.now();
  let after = 0;
  for (;;) {
    const batch = await store.pendingEmbeddings(512, after);
    if (batch.length === 0) break;
    for (const pending of batch) {
      const row = byHash.get(pending.contentHash);
      if (row !== undefined) await store.setEmbedding(pending.rowId, pending.contentHash, vectors.get(row));
      after = pending.rowId;
    }
  }
  return { writeMs, embedMs: performance.now() - started };
}

/**
 * Copies every memory of `from` (rows, full-text entries and both vector tables) to each
 * of `to`, in one transaction on a second connection to the same SQLite file. Building
 * nine more keys of 100k through the store API would take most of an hour on a busy
 * 2-core machine; the copies are the same rows as the API wrote, only under other keys.
 * Public ids stay valid UUIDs and unique (key index and row id are encoded in them).
 */
export function cloneKey(file: string, from: string, to: string[], ledger: Ledger): void {
  const db = new Database(file);
  registerMemoryFunctions(db);
  db.pragma('busy_timeout = 60000');
  try {
    const { top } = db.prepare('SELECT MAX(id) AS top FROM memories').get() as { top: number };
    const stride = 10 ** Math.ceil(Math.log10(top + 1));
    const copy = db.transaction(() => {
      for (const [i, key] of to.entries()) {
        const offset = (i + 1) * stride;
        db.prepare(
          `INSERT INTO memories (id, public_id, api_key_id, namespace, key, content, content_hash, tags, metadata,
             pinned, expires_at, embedding_status, created_at, updated_at)
           SELECT id + @offset, printf('%08x-0000-4000-8000-%012x', @n, id), @to, namespace, key, content,
             content_hash, tags, metadata, pinned, expires_at, embedding_status, created_at, updated_at
             FROM memories WHERE api_key_id = @from`,
        ).run({ offset, n: i + 1, to: key, from });
        db.prepare(
          `INSERT INTO memories_vec_float (memory_id, embedding)
           SELECT f.memory_id + @offset, f.embedding FROM memories_vec_float f
             JOIN memories m ON m.id = f.memory_id WHERE m.api_key_id = @from`,
        ).run({ offset, from });
        db.prepare(
          `INSERT INTO memories_bits (memory_id, api_key_id, bits)
           SELECT memory_id + @offset, @to, bits FROM memories_bits WHERE api_key_id = @from ORDER BY seq`,
        ).run({ offset, to: key, from });
      }
    });
    copy.immediate();
    const owners = db.prepare('SELECT public_id, id FROM memories WHERE api_key_id = ?');
    const source = new Map(
      (owners.all(from) as { public_id: string; id: number }[]).map((r) => [r.id, r.public_id]),
    );
    for (const [i, key] of to.entries()) {
      const offset = (i + 1) * stride;
      for (const row of owners.iterate(key) as Iterable<{ public_id: string; id: number }>) {
        ledger.add(row.public_id, key, ledger.row(source.get(row.id - offset)!));
      }
    }
  } finally {
    db.close();
  }
}

export function searchRequest(
  query: string,
  vector: Float32Array | null,
  mode: SearchRequest['mode'],
  extra: Partial<SearchRequest> = {},
): SearchRequest {
  return { ...queryWords(query), vector, mode, fetch: 40, filter: {}, ...extra };
}

/**
 * A search as the memory service runs it (store candidates, then the shared ranking with
 * the local provider's settings), top 10, weak candidates included so recall is comparable.
 */
export async function rankedSearch(
  store: MemoryStore,
  key: string,
  request: SearchRequest,
): Promise<RankedHit[]> {
  const found = await store.search(key, request, Date.now());
  const mode = request.vector === null ? 'keyword' : request.mode;
  return rankCandidates(
    found,
    { stems: request.stems, mode, limit: 10, includeWeak: true },
    SEARCH_DEFAULTS.local,
    Date.now(),
  ).hits;
}

/**
 * Recall@10 of the store's vector search against an exact top 10, the queries rotating over
 * the keys, every hit checked to be the key's own. `exact` names the exact top 10 the way
 * `idOf` names a hit (a memory id, or a corpus row).
 */
export async function recallAt10<Id>(
  store: MemoryStore,
  keys: string[],
  queries: Array<{ text: string; vector: Float32Array }>,
  ledger: Ledger,
  exact: (key: string, vector: Float32Array) => Promise<Set<Id>> | Set<Id>,
  idOf: (memoryId: string) => Id,
): Promise<number> {
  let found = 0;
  let wanted = 0;
  for (const [i, q] of queries.entries()) {
    const key = keys[i % keys.length]!;
    const hits = await rankedSearch(store, key, searchRequest(q.text, q.vector, 'vector'));
    ledger.check(
      key,
      hits.map((h) => h.memory.id),
    );
    const best = await exact(key, q.vector);
    wanted += best.size;
    found += hits.filter((h) => best.has(idOf(h.memory.id))).length;
  }
  return Math.round((found / wanted) * 1000) / 1000;
}

/** Exact top-k rows by cosine (dot product of unit vectors) over corpus rows [0, size). */
export function exactTopK(vectors: CorpusVectors, size: number, query: Float32Array, k: number): number[] {
  const best: { row: number; score: number }[] = [];
  for (let row = 0; row < size; row++) {
    const v = vectors.get(row);
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
    if (best.length < k || dot > best[best.length - 1]!.score) {
      best.push({ row, score: dot });
      best.sort((a, b) => b.score - a.score);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.row);
}
