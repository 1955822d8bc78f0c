import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RankSettings, rankCandidates } from '../../../gateway/namespaces/memory/ranking.ts';
import { contentHash } from '../../../gateway/namespaces/memory/store/common.ts';
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
  return {
    memory,
    contentHash: contentHash(`memory ${id}`),
    cosine,
    keywordScore: null,
    vectorRank: null,
    keywordRank: null,
  };
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

test('the window crosses the weak line, and follows the best one left', () => {
  // 0.32 and 0.29 are a near tie whichever side of the weak line (0.3) each falls: the
  // newer statement leads, as it would a hundredth higher up.
  const strong = candidate('strong', 0.32, 30);
  const weakNew = candidate('weak-new', 0.29, 1);
  assert.deepEqual(order([strong, weakNew], 0.1), ['weak-new', 'strong']);
  assert.deepEqual(order([strong, weakNew], 0.02), ['strong', 'weak-new']);
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

/** Hybrid ranking as the minilm default does it: the vector share is 1, keywords break ties. */
function hybrid(candidates: Candidate[], stems: string[], over: Partial<RankSettings> = {}) {
  const found = { candidates, total: candidates.length, documentFrequency: {} };
  return rankCandidates(
    found,
    { stems, mode: 'hybrid', limit: 10, includeWeak: false },
    { ...settings(0), ...over },
    NOW,
  );
}

function worded(id: string, content: string, cosine: number): Candidate {
  const c = candidate(id, cosine, 1);
  // Ranking keeps stems by this hash across the process, so it is the content's own.
  return { ...c, memory: { ...c.memory, content }, contentHash: contentHash(content) };
}

test('hybrid hides no candidate that its vector arm would show', () => {
  // Meaning clears the noise floor, words do not: the blend (0.7 · 0.2 = 0.14) would fall
  // under it, the vector arm alone (0.2) does not.
  const plain = worded('plain', 'We moved the standup to half past ten', 0.2);
  const split = { vectorWeight: 0.7, hideBelow: 0.15 };
  const shown = hybrid([plain], ['meet'], split);
  assert.deepEqual(
    shown.hits.map((hit) => hit.memory.id),
    ['plain'],
  );
  assert.equal(shown.hidden, 0);
  // Under the floor by both arms it is noise, and only include_weak shows it.
  const noise = hybrid([worded('noise', 'Bought new running shoes', 0.1)], ['meet'], split);
  assert.deepEqual(noise.hits, []);
  assert.equal(noise.hidden, 1);
});

test('with the vector share at 1, the query words decide only between equal meanings', () => {
  const words = worded('words', 'My locker code is 4471', 0.5);
  const other = worded('other', 'The gym opens at six', 0.5);
  const closer = worded('closer', 'Opening hours of the gym changed', 0.51);
  const ids = hybrid([other, words, closer], ['locker', 'code']).hits.map((hit) => hit.memory.id);
  assert.deepEqual(ids, ['closer', 'words', 'other']);
});

test('a newer memory that says something changed may lead from further behind than a merely newer one', () => {
  const said = (id: string, content: string, cosine: number, daysAgo: number) => {
    const c = candidate(id, cosine, daysAgo);
    // Ranking keeps stems by this hash across the process, so it is the content's own.
    return { ...c, memory: { ...c.memory, content }, contentHash: contentHash(content) };
  };
  const old = said('old', 'My locker code is 4471', 0.7, 30);
  const changed = said('changed', 'They changed my locker code, it is 9902 now', 0.55, 1);
  const newer = said('newer', 'The locker room was busy today', 0.55, 1);
  const rank = (candidates: Candidate[], asksNow: boolean) =>
    rankCandidates(
      { candidates, total: candidates.length, documentFrequency: {} },
      { stems: [], mode: 'vector', limit: 10, includeWeak: true, asksNow },
      { ...settings(0), changedWithin: 0, changedWithinNow: 0.2 },
      NOW,
    ).hits.map((hit) => hit.memory.id);
  assert.deepEqual(rank([old, changed], true), ['changed', 'old']);
  assert.deepEqual(rank([old, newer], true), ['old', 'newer']);
  // Not a question about the present: the changed window here is 0, the better match leads.
  assert.deepEqual(rank([old, changed], false), ['old', 'changed']);
});
