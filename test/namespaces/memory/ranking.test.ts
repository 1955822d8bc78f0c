import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RankSettings, rankCandidates } from '../../../gateway/namespaces/memory/ranking.ts';
import type { Candidate, MemoryRecord } from '../../../gateway/namespaces/memory/store/types.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00Z');

function candidate(id: string, cosine: number, daysAgo: number): Candidate {
  const memory: MemoryRecord = {
    id,
    content: `memory ${id}`,
    tags: [],
    metadata: {},
    namespace: 'default',
    key: null,
    pinned: false,
    createdAt: NOW - daysAgo * DAY,
    updatedAt: NOW - daysAgo * DAY,
    occurredAt: NOW - daysAgo * DAY,
    seq: 0,
    expiresAt: null,
    embeddingStatus: 'ready',
    supersededBy: null,
  };
  return { memory, cosine, keywordScore: null, vectorRank: null, keywordRank: null };
}

// Cosine maps straight onto relevance (floor 0, full 1, vector only), so the gaps are plain.
const settings = (newerWithin: number): RankSettings => ({
  fusion: 'convex',
  vectorWeight: 1,
  floor: 0,
  full: 1,
  weakBelow: 0.3,
  hideBelow: 0,
  newerWithin,
  newerWithinNow: 0,
});

function order(candidates: Candidate[], newerWithin: number): string[] {
  const found = { candidates, total: candidates.length, documentFrequency: {} };
  const ranked = rankCandidates(
    found,
    { stems: [], mode: 'vector', limit: 10, includeWeak: true },
    settings(newerWithin),
    NOW,
  );
  return ranked.hits.map((hit) => hit.memory.id);
}

test('a near tie between an old and a new statement goes to the new one', () => {
  const old = candidate('old', 0.62, 60);
  const current = candidate('current', 0.6, 2);
  assert.deepEqual(order([old, current], 0), ['old', 'current']);
  assert.deepEqual(order([old, current], 0.05), ['current', 'old']);
});

test('a clearly better match keeps its place however new the other is', () => {
  const strong = candidate('strong', 0.8, 90);
  const newer = candidate('newer', 0.6, 1);
  assert.deepEqual(order([strong, newer], 0.05), ['strong', 'newer']);
});

test('a weak memory never passes a strong one, and the window follows the best one left', () => {
  const strong = candidate('strong', 0.32, 30);
  const weakNew = candidate('weak-new', 0.29, 1);
  assert.deepEqual(order([strong, weakNew], 0.1), ['strong', 'weak-new']);
  // a 0.70, b 0.66 (newer), c 0.62 (newest): b is within 0.05 of a and goes first; c is
  // within 0.05 of b but not of a, the best one left after b, so a keeps second place.
  const a = candidate('a', 0.7, 30);
  const b = candidate('b', 0.66, 20);
  const c = candidate('c', 0.62, 10);
  assert.deepEqual(order([a, b, c], 0.05), ['b', 'a', 'c']);
});

test('a question about the present lets the newer statement lead from further behind', () => {
  const old = candidate('old', 0.7, 60);
  const current = candidate('current', 0.6, 2);
  const now = { ...settings(0.02), newerWithinNow: 0.15 };
  const found = { candidates: [old, current], total: 2, documentFrequency: {} };
  const ask = (asksNow: boolean) =>
    rankCandidates(
      found,
      { stems: [], mode: 'vector', limit: 10, includeWeak: true, asksNow },
      now,
      NOW,
    ).hits.map((hit) => hit.memory.id);
  assert.deepEqual(ask(false), ['old', 'current']);
  assert.deepEqual(ask(true), ['current', 'old']);
  // Past the window the better match still leads.
  const far = { ...found, candidates: [candidate('old', 0.9, 60), current] };
  assert.deepEqual(
    rankCandidates(
      far,
      { stems: [], mode: 'vector', limit: 10, includeWeak: true, asksNow: true },
      now,
      NOW,
    ).hits.map((hit) => hit.memory.id),
    ['old', 'current'],
  );
});
