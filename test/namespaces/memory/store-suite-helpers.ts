/** What the store suite's cases share: fresh keys, unit vectors, search requests, embedding. */
import { randomUUID } from 'node:crypto';
import { searchTerms } from '../../../gateway/namespaces/memory/store/common.ts';
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

export function searchOf(query: string, extra: Partial<SearchRequest> = {}): SearchRequest {
  return {
    terms: searchTerms(query),
    vector: null,
    mode: 'hybrid',
    limit: 10,
    minScore: 0,
    weights: { vector: 1, keyword: 1 },
    filter: {},
    ...extra,
  };
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
