/** What the store suite's cases share: fresh keys, unit vectors, search requests, embedding. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type RankSettings, rankCandidates } from '../../../gateway/namespaces/memory/ranking.ts';
import { contentHash } from '../../../gateway/namespaces/memory/store/common.ts';
import { queryWords } from '../../../gateway/namespaces/memory/store/text.ts';
import type { MemoryStore, SearchRequest } from '../../../gateway/namespaces/memory/store/types.ts';

export const DIMS = 4;
export const MODEL = { model: 'test-axes', dimensions: DIMS };

export function freshKey(): string {
  return `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

export function unit(...values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return new Float32Array(values.map((v) => v / norm));
}

/** A store request plus the ranking options a test may set (limit, min_score, weights). */
export interface TestSearch {
  request: SearchRequest;
  limit: number;
  minScore?: number;
  weights?: { vector: number; keyword: number };
}

export function searchOf(
  query: string,
  extra: Partial<SearchRequest> & {
    limit?: number;
    minScore?: number;
    weights?: { vector: number; keyword: number };
  } = {},
): TestSearch {
  const { limit = 10, minScore, weights, ...request } = extra;
  return {
    request: { ...queryWords(query), vector: null, mode: 'hybrid', fetch: 40, filter: {}, ...request },
    limit,
    ...(minScore === undefined ? {} : { minScore }),
    ...(weights ? { weights } : {}),
  };
}

/** Ranking that hides nothing: the suite checks what the stores find and how it is fused. */
export const TEST_RANKING: RankSettings = {
  fusion: 'convex',
  vectorWeight: 0.5,
  floor: 0,
  full: 1,
  weakBelow: 0,
  hideBelow: 0,
  newerWithin: 0,
  newerWithinNow: 0,
};

/** A search as the service runs it: the store's candidates, ranked; `score` is the cosine. */
export async function searchHits(store: MemoryStore, apiKeyId: string, search: TestSearch, now: number) {
  const found = await store.search(apiKeyId, search.request, now);
  // Ranking keeps a candidate's stems by this hash, so it must be the hash of the candidate's own text.
  for (const candidate of found.candidates) {
    assert.equal(candidate.contentHash, contentHash(candidate.memory.content), candidate.memory.content);
  }
  const ranked = rankCandidates(
    found,
    {
      stems: search.request.stems,
      mode: search.request.vector === null ? 'keyword' : search.request.mode,
      limit: search.limit,
      includeWeak: true,
      ...(search.minScore === undefined ? {} : { minScore: search.minScore }),
      ...(search.weights ? { weights: search.weights } : {}),
    },
    TEST_RANKING,
    now,
  );
  return ranked.hits.map((hit) => ({ ...hit, score: hit.cosine }));
}

/** Embeds every pending row with the vector the test chose for its content. */
export async function embedAll(store: MemoryStore, vectors: Map<string, Float32Array>): Promise<void> {
  let after = 0;
  for (;;) {
    const batch = await store.pendingEmbeddings(50, after);
    if (batch.length === 0) return;
    for (const row of batch) {
      const vector = vectors.get(row.content);
      if (vector) await store.setEmbedding(row.rowId, row.contentHash, vector);
      after = row.rowId;
    }
  }
}

/** What every case starts from: a cap far above what a case writes, and a fixed clock. */
export const MAX = 1000;
export const t0 = Date.UTC(2026, 0, 1);
