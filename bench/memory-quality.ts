/**
 * Retrieval quality on the WordNet set with the real local embedder: recall@10 and MRR@10
 * per search mode and arm weights, raw and lemma-masked queries, plus the score floor
 * analysis that picks the local provider's default `min_score`. A decoy key holds the same
 * texts, so any cross-key leak would show up as a hit on identical content.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteMemoryStore } from '../gateway/namespaces/memory/store/sqlite-store.ts';
import type { SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import type { LabelledQuery } from './memory-data.ts';
import { type CorpusVectors, fillKey, type Ledger, searchRequest } from './memory-fixtures.ts';
import type { VectorSet } from './memory-vectors.ts';

const round = (n: number) => Math.round(n * 1000) / 1000;

export interface QualityRow {
  variant: 'raw' | 'masked';
  mode: SearchMode;
  weights: { vector: number; keyword: number };
  minScore: number;
  recallAt10: number;
  mrr: number;
}

export interface FloorRow {
  minScore: number;
  /** Share of the vector arm's correct top-10 hits the floor keeps (raw and masked pooled). */
  keptCorrect: number;
  /** Share of queries with no relevant memory stored whose vector hits the floor removes entirely. */
  emptiedUnanswerable: number;
}

export interface QualityFigures {
  corpus: number;
  queries: number;
  rows: QualityRow[];
  floors: FloorRow[];
  chosen: { minScore: number; weights: { vector: number; keyword: number } };
}

const WEIGHTS = [
  { vector: 1, keyword: 1 },
  { vector: 1, keyword: 2 },
  { vector: 1, keyword: 3 },
  { vector: 1, keyword: 5 },
  { vector: 1, keyword: 10 },
  { vector: 2, keyword: 1 },
  { vector: 3, keyword: 1 },
];
const FLOORS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];

export async function benchQuality(
  texts: string[],
  vectors: CorpusVectors,
  corpus: number,
  queries: LabelledQuery[],
  raw: VectorSet,
  masked: VectorSet,
  unanswerable: { texts: string[]; vectors: VectorSet },
  ledger: Ledger,
  log: (line: string) => void,
): Promise<QualityFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-bench-memory-quality-'));
  const store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
  const key = 'quality';
  try {
    log(`memory: quality set, ${corpus} WordNet definitions under two keys, ${queries.length} queries`);
    await fillKey(store, key, texts, 0, corpus, vectors, ledger);
    await fillKey(store, 'decoy', texts, 0, corpus, vectors, ledger);

    const measure = async (
      variant: 'raw' | 'masked',
      mode: SearchMode,
      weights: { vector: number; keyword: number },
      minScore: number,
    ): Promise<QualityRow & { targetScores: number[] }> => {
      let found = 0;
      let reciprocal = 0;
      const targetScores: number[] = [];
      for (const [i, q] of queries.entries()) {
        const text = variant === 'raw' ? q.raw : q.masked;
        const vector = (variant === 'raw' ? raw : masked).row(i);
        const hits = await store.search(
          key,
          searchRequest(text, vector, mode, { weights, minScore }),
          Date.now(),
        );
        ledger.check(
          key,
          hits.map((h) => h.memory.id),
        );
        const rank = hits.findIndex((h) => ledger.row(h.memory.id) === q.target);
        if (rank >= 0) {
          found++;
          reciprocal += 1 / (rank + 1);
          if (hits[rank]!.score !== null) targetScores.push(hits[rank]!.score!);
        }
      }
      return {
        variant,
        mode,
        weights,
        minScore,
        recallAt10: round(found / queries.length),
        mrr: round(reciprocal / queries.length),
        targetScores,
      };
    };

    const rows: QualityRow[] = [];
    const correctScores: number[] = [];
    for (const variant of ['raw', 'masked'] as const) {
      const keyword = await measure(variant, 'keyword', { vector: 0, keyword: 1 }, 0);
      const vector = await measure(variant, 'vector', { vector: 1, keyword: 0 }, 0);
      correctScores.push(...vector.targetScores);
      rows.push(keyword, vector);
      for (const weights of WEIGHTS) rows.push(await measure(variant, 'hybrid', weights, 0));
    }

    // Top vector score of queries whose answer is not stored: what a floor should cut.
    const topUnanswerable: number[] = [];
    for (const [i, text] of unanswerable.texts.entries()) {
      const hits = await store.search(
        key,
        searchRequest(text, unanswerable.vectors.row(i), 'vector', { limit: 1 }),
        Date.now(),
      );
      ledger.check(
        key,
        hits.map((h) => h.memory.id),
      );
      topUnanswerable.push(hits[0]?.score ?? 0);
    }
    const floors = FLOORS.map((minScore) => ({
      minScore,
      keptCorrect: round(
        correctScores.filter((s) => s >= minScore).length / Math.max(1, correctScores.length),
      ),
      emptiedUnanswerable: round(
        topUnanswerable.filter((s) => s < minScore).length / Math.max(1, topUnanswerable.length),
      ),
    }));
    // The highest floor that still keeps 95% of the correct vector hits.
    const minScore = floors.filter((f) => f.keptCorrect >= 0.95).at(-1)?.minScore ?? 0;
    // Weights by the mean MRR over raw and masked queries.
    const score = (w: { vector: number; keyword: number }) =>
      rows
        .filter(
          (r) => r.mode === 'hybrid' && r.weights.vector === w.vector && r.weights.keyword === w.keyword,
        )
        .reduce((sum, r) => sum + r.mrr, 0);
    const weights = [...WEIGHTS].sort((a, b) => score(b) - score(a))[0]!;
    for (const variant of ['raw', 'masked'] as const) {
      const { targetScores: _, ...row } = await measure(variant, 'hybrid', weights, minScore);
      rows.push(row);
    }
    return {
      corpus,
      queries: queries.length,
      rows: rows.map(({ targetScores: _, ...row }: QualityRow & { targetScores?: number[] }) => row),
      floors,
      chosen: { minScore, weights },
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
