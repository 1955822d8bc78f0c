/**
 * The one behaviour suite every memory store adapter must pass (SQLite and Postgres run
 * the same cases). Each case uses fresh api key ids, so cases share one store per file.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { contentHash, plainWrite, searchTerms } from '../../../gateway/namespaces/memory/store/common.ts';
import {
  MemoryLimitError,
  type MemoryStore,
  type SearchRequest,
  type WriteInput,
} from '../../../gateway/namespaces/memory/store/types.ts';

const DIMS = 4;
const MODEL = { model: 'test-axes', dimensions: DIMS };

function freshKey(): string {
  return `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

function unit(...values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return new Float32Array(values.map((v) => v / norm));
}

function searchOf(query: string, extra: Partial<SearchRequest> = {}): SearchRequest {
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
async function embedAll(store: MemoryStore, vectors: Map<string, Float32Array>): Promise<void> {
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

export function memoryStoreSuite(name: string, getStore: () => MemoryStore): void {
  const MAX = 1000;
  const t0 = Date.UTC(2026, 0, 1);

  test(`${name}: write, get, and another key sees nothing`, async () => {
    const store = getStore();
    const [a, b] = [freshKey(), freshKey()];
    const written = await store.write(
      a,
      plainWrite('The deploy runs on Fridays', { tags: ['ops'], metadata: { team: 'infra' } }),
      MAX,
      t0,
    );
    assert.equal(written.status, 'created');
    assert.equal(written.memory.embeddingStatus, 'pending');
    assert.deepEqual(await store.get(a, written.memory.id, t0), written.memory);
    assert.equal(await store.get(b, written.memory.id, t0), null);
    assert.equal(await store.update(b, written.memory.id, { pinned: true }, t0), null);
    assert.equal(await store.delete(b, written.memory.id, t0), false);
    assert.equal((await store.list(b, {}, { limit: 10 }, t0)).memories.length, 0);
    assert.equal((await store.stats(b, t0)).count, 0);
    assert.equal((await store.search(b, searchOf('deploy Fridays'), t0)).length, 0);
    assert.equal((await store.export(b, { limit: 10, maxBytes: 1 << 20 }, t0)).memories.length, 0);
    const bulk = await store.deleteMany(
      b,
      { ids: [written.memory.id] },
      { dryRun: false, includePinned: true },
      t0,
    );
    assert.equal(bulk.matched, 0);
    assert.ok(await store.get(a, written.memory.id, t0));
  });

  test(`${name}: upsert by key within a key and namespace`, async () => {
    const store = getStore();
    const a = freshKey();
    const first = await store.write(a, plainWrite('editor: vim', { key: 'editor' }), MAX, t0);
    const again = await store.write(a, plainWrite('editor: vim', { key: 'editor' }), MAX, t0 + 1);
    assert.equal(again.status, 'unchanged');
    const changed = await store.write(
      a,
      plainWrite('editor: helix', { key: 'editor', tags: ['pref'] }),
      MAX,
      t0 + 2,
    );
    assert.equal(changed.status, 'updated');
    assert.equal(changed.memory.id, first.memory.id);
    assert.equal(changed.memory.content, 'editor: helix');
    assert.deepEqual(changed.memory.tags, ['pref']);
    assert.equal(changed.memory.updatedAt, t0 + 2);
    const other = await store.write(
      a,
      plainWrite('editor: emacs', { key: 'editor', namespace: 'work' }),
      MAX,
      t0,
    );
    assert.equal(other.status, 'created');
    assert.notEqual(other.memory.id, first.memory.id);
    // The same key name under another api key is another memory.
    const foreign = await store.write(freshKey(), plainWrite('editor: nano', { key: 'editor' }), MAX, t0);
    assert.equal(foreign.status, 'created');
    assert.equal((await store.get(a, first.memory.id, t0))?.content, 'editor: helix');
  });

  test(`${name}: exact-content dedup merges tags; other namespaces and dedupe none store anew`, async () => {
    const store = getStore();
    const a = freshKey();
    const first = await store.write(a, plainWrite('User prefers dark mode', { tags: ['ui'] }), MAX, t0);
    const twin = await store.write(
      a,
      plainWrite('  User   prefers dark mode ', { tags: ['pref'] }),
      MAX,
      t0 + 5,
    );
    assert.equal(twin.status, 'unchanged');
    assert.equal(twin.memory.id, first.memory.id);
    assert.deepEqual(twin.memory.tags, ['ui', 'pref']);
    assert.equal((await store.write(a, plainWrite('user prefers dark mode'), MAX, t0)).status, 'created');
    assert.equal(
      (await store.write(a, plainWrite('User prefers dark mode', { namespace: 'x' }), MAX, t0)).status,
      'created',
    );
    assert.equal(
      (await store.write(a, plainWrite('User prefers dark mode', { dedupe: 'none' }), MAX, t0)).status,
      'created',
    );
    assert.equal((await store.stats(a, t0)).count, 4);
  });

  test(`${name}: the cap evicts the least recently written unpinned memories and says which`, async () => {
    const store = getStore();
    const a = freshKey();
    const pinned = await store.write(a, plainWrite('pinned fact', { pinned: true }), 3, t0);
    const m1 = await store.write(a, plainWrite('one'), 3, t0 + 1);
    const m2 = await store.write(a, plainWrite('two'), 3, t0 + 2);
    const m3 = await store.write(a, plainWrite('three'), 3, t0 + 3);
    assert.deepEqual(m3.evictedIds, [m1.memory.id]);
    assert.equal(await store.get(a, m1.memory.id, t0 + 3), null);
    assert.ok(await store.get(a, pinned.memory.id, t0 + 3));
    // Another key's writes never evict this key's memories.
    for (let i = 0; i < 4; i++) await store.write(freshKey(), plainWrite(`other ${i}`), 3, t0 + 4);
    assert.equal((await store.stats(a, t0 + 4)).count, 3);
    await store.update(a, m2.memory.id, { pinned: true }, t0 + 5);
    await store.update(a, m3.memory.id, { pinned: true }, t0 + 6);
    await assert.rejects(store.write(a, plainWrite('four'), 3, t0 + 7), (error: unknown) => {
      assert.ok(error instanceof MemoryLimitError);
      assert.equal(error.message, 'memory limit reached (3); delete or unpin memories first');
      return true;
    });
    assert.equal((await store.stats(a, t0 + 7)).count, 3);
  });

  test(`${name}: expired memories are invisible at once and purged later`, async () => {
    const store = getStore();
    const a = freshKey();
    const short = await store.write(
      a,
      plainWrite('temporary door code 4711', { expiresAt: t0 + 1000 }),
      MAX,
      t0,
    );
    const kept = await store.write(a, plainWrite('permanent door code note'), MAX, t0);
    assert.ok(await store.get(a, short.memory.id, t0 + 999));
    const later = t0 + 1000;
    assert.equal(await store.get(a, short.memory.id, later), null);
    assert.deepEqual(
      (await store.list(a, {}, { limit: 10 }, later)).memories.map((m) => m.id),
      [kept.memory.id],
    );
    assert.equal((await store.search(a, searchOf('door code'), later)).length, 1);
    assert.equal((await store.stats(a, later)).count, 1);
    assert.equal((await store.list(a, { includeExpired: true }, { limit: 10 }, later)).memories.length, 2);
    assert.ok((await store.purgeExpired(later)) >= 1);
    assert.equal((await store.list(a, { includeExpired: true }, { limit: 10 }, later)).memories.length, 1);
  });

  test(`${name}: list filters by tags any|all, metadata, times and pinned; pages with cursors`, async () => {
    const store = getStore();
    const a = freshKey();
    const w = async (content: string, at: number, extra: Partial<WriteInput> = {}) =>
      (await store.write(a, plainWrite(content, extra), MAX, at)).memory;
    const m1 = await w('alpha', t0 + 1, { tags: ['x', 'y'], metadata: { project: 'p1' } });
    const m2 = await w('beta', t0 + 2, { tags: ['x'], metadata: { project: 'p2' } });
    const m3 = await w('gamma', t0 + 3, { tags: ['y'], pinned: true, namespace: 'n2' });
    const m4 = await w('delta', t0 + 4);
    const ids = async (filter: object, page = { limit: 10 }) =>
      (await store.list(a, filter, page, t0 + 10)).memories.map((m) => m.id);
    assert.deepEqual(await ids({}), [m3.id, m4.id, m2.id, m1.id]);
    assert.deepEqual(await ids({ tags: ['x', 'y'] }), [m3.id, m2.id, m1.id]);
    assert.deepEqual(await ids({ tags: ['x', 'y'], tagMode: 'all' }), [m1.id]);
    assert.deepEqual(await ids({ metadata: { project: 'p2' } }), [m2.id]);
    assert.deepEqual(await ids({ createdAfter: t0 + 1, createdBefore: t0 + 4 }), [m3.id, m2.id]);
    assert.deepEqual(await ids({ pinned: false, namespace: 'default' }), [m4.id, m2.id, m1.id]);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list(
        a,
        {},
        { limit: 3, order: 'oldest', ...(cursor ? { cursor } : {}) },
        t0 + 10,
      );
      seen.push(...page.memories.map((m) => m.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    assert.deepEqual(seen, [m1.id, m2.id, m3.id, m4.id]);
    const p1 = await store.list(a, {}, { limit: 2 }, t0 + 10);
    const p2 = await store.list(a, {}, { limit: 2, cursor: p1.nextCursor! }, t0 + 10);
    assert.deepEqual(
      [...p1.memories, ...p2.memories].map((m) => m.id),
      [m3.id, m4.id, m2.id, m1.id],
    );
    assert.equal(p2.nextCursor, null);
  });

  test(`${name}: update merges metadata, replaces tags, re-embeds changed content`, async () => {
    const store = getStore();
    const a = freshKey();
    const m = (
      await store.write(a, plainWrite('v1 text', { metadata: { a: '1', b: '2' }, tags: ['t'] }), MAX, t0)
    ).memory;
    await store.adoptEmbeddingModel(MODEL);
    await embedAll(store, new Map([['v1 text', unit(1, 0, 0, 0)]]));
    assert.equal((await store.get(a, m.id, t0))?.embeddingStatus, 'ready');
    const tagged = await store.update(a, m.id, { tags: ['u'], metadata: { b: null, c: '3' } }, t0 + 1);
    assert.deepEqual(tagged?.tags, ['u']);
    assert.deepEqual(tagged?.metadata, { a: '1', c: '3' });
    assert.equal(tagged?.embeddingStatus, 'ready');
    const rewritten = await store.update(
      a,
      m.id,
      { content: { text: 'v2 text', hash: contentHash('v2 text') } },
      t0 + 2,
    );
    assert.equal(rewritten?.content, 'v2 text');
    assert.equal(rewritten?.embeddingStatus, 'pending');
    // The old vector is gone with the old content: a vector search finds nothing until re-embedded.
    const vectorOnly = searchOf('zzz', { vector: unit(1, 0, 0, 0), mode: 'vector' });
    assert.equal((await store.search(a, vectorOnly, t0 + 2)).length, 0);
  });

  test(`${name}: delete_many by filter and ids, dry run first, pinned kept unless asked`, async () => {
    const store = getStore();
    const a = freshKey();
    const w = async (content: string, extra: Partial<WriteInput> = {}) =>
      (await store.write(a, plainWrite(content, extra), MAX, t0)).memory;
    const m1 = await w('one', { tags: ['old'] });
    const m2 = await w('two', { tags: ['old'], pinned: true });
    const m3 = await w('three');
    const dry = await store.deleteMany(
      a,
      { filter: { tags: ['old'] } },
      { dryRun: true, includePinned: false },
      t0,
    );
    assert.deepEqual(dry, { matched: 1, deleted: 0, ids: [m1.id] });
    assert.equal((await store.stats(a, t0)).count, 3);
    const real = await store.deleteMany(
      a,
      { filter: { tags: ['old'] } },
      { dryRun: false, includePinned: true },
      t0,
    );
    assert.deepEqual(real, { matched: 2, deleted: 2, ids: [m1.id, m2.id] });
    const byIds = await store.deleteMany(
      a,
      { ids: [m3.id, randomUUID()] },
      { dryRun: false, includePinned: false },
      t0,
    );
    assert.deepEqual(byIds, { matched: 1, deleted: 1, ids: [m3.id] });
    assert.equal((await store.stats(a, t0)).count, 0);
  });

  test(`${name}: export pages through everything, full content, within a size budget`, async () => {
    const store = getStore();
    const a = freshKey();
    const big = 'x'.repeat(3000);
    for (let i = 0; i < 5; i++) await store.write(a, plainWrite(`${i} ${big}`), MAX, t0 + i);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.export(
        a,
        { limit: 4, maxBytes: 7000, ...(cursor ? { cursor } : {}) },
        t0 + 10,
      );
      assert.ok(page.memories.length <= 2);
      seen.push(...page.memories.map((m) => m.content));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      [0, 1, 2, 3, 4].map((i) => `${i} ${big}`),
    );
  });

  test(`${name}: stats count per namespace, pinned, pending and failed embeddings`, async () => {
    const store = getStore();
    const a = freshKey();
    await store.write(a, plainWrite('s1', { pinned: true }), MAX, t0 + 1);
    await store.write(a, plainWrite('s2', { namespace: 'work' }), MAX, t0 + 2);
    const pending = await store.pendingEmbeddings(1000, 0);
    const s2 = pending.find((p) => p.content === 's2')!;
    await store.markEmbeddingFailed(s2.rowId, s2.contentHash);
    const stats = await store.stats(a, t0 + 3);
    assert.deepEqual(stats, {
      count: 2,
      byNamespace: { default: 1, work: 1 },
      pinned: 1,
      pendingEmbeddings: 1,
      failedEmbeddings: 1,
      oldestAt: t0 + 1,
      newestAt: t0 + 2,
    });
  });

  test(`${name}: hybrid search fuses both arms, honours filters, floor and weights, and stays in its key`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    const [a, b] = [freshKey(), freshKey()];
    const docs: [string, Float32Array, Partial<WriteInput>][] = [
      ['the database migration failed with error E1234', unit(1, 0, 0, 0), { tags: ['db'] }],
      ['schema upgrade broke the tables', unit(0.95, 0.3, 0, 0), { tags: ['db'], namespace: 'n2' }],
      ['lunch is at noon', unit(0, 0, 1, 0), {}],
      ['error budget for the quarter', unit(0, 1, 0, 0), {}],
    ];
    const ids: string[] = [];
    for (const [content, , extra] of docs)
      ids.push((await store.write(a, plainWrite(content, extra), MAX, t0)).memory.id);
    // The same text under another key must never appear in a's results.
    await store.write(b, plainWrite(docs[0]![0]), MAX, t0);
    await embedAll(store, new Map(docs.map(([content, vector]) => [content, vector])));
    const q = unit(1, 0.1, 0, 0);
    const hybrid = await store.search(a, searchOf('migration error', { vector: q, minScore: 0.5 }), t0);
    assert.equal(hybrid[0]?.memory.id, ids[0]);
    assert.equal(hybrid[0]?.source, 'both');
    assert.ok(hybrid.every((hit) => [ids[0], ids[1], ids[3]].includes(hit.memory.id)));
    assert.equal(hybrid.find((hit) => hit.memory.id === ids[1])?.source, 'vector');
    assert.equal(hybrid.find((hit) => hit.memory.id === ids[3])?.source, 'keyword');
    assert.equal(hybrid.find((hit) => hit.memory.id === ids[3])?.score, null);
    const vectorOnly = await store.search(
      a,
      searchOf('migration error', { vector: q, mode: 'vector', minScore: 0.5 }),
      t0,
    );
    assert.deepEqual(
      vectorOnly.map((hit) => hit.memory.id),
      [ids[0], ids[1]],
    );
    assert.ok(vectorOnly[0]!.score! > 0.99);
    const keywordOnly = await store.search(a, searchOf('E1234', { vector: q, mode: 'keyword' }), t0);
    assert.deepEqual(
      keywordOnly.map((hit) => [hit.memory.id, hit.source]),
      [[ids[0], 'keyword']],
    );
    const filtered = await store.search(
      a,
      searchOf('tables', { vector: q, filter: { namespace: 'n2' } }),
      t0,
    );
    assert.deepEqual(
      filtered.map((hit) => hit.memory.id),
      [ids[1]],
    );
    const byTag = await store.search(
      a,
      searchOf('error', { vector: q, filter: { tags: ['db'] }, minScore: 0.5 }),
      t0,
    );
    assert.deepEqual(new Set(byTag.map((hit) => hit.memory.id)), new Set([ids[0], ids[1]]));
    // Weight zero on the vector arm ranks by keyword alone.
    const kwWeighted = await store.search(
      a,
      searchOf('quarter', { vector: q, weights: { vector: 0, keyword: 1 } }),
      t0,
    );
    assert.equal(kwWeighted[0]?.memory.id, ids[3]);
    for (const hit of [...hybrid, ...vectorOnly, ...filtered]) assert.ok(ids.includes(hit.memory.id));
    const other = await store.search(b, searchOf('migration error', { vector: q }), t0);
    assert.equal(other.length, 1);
    assert.ok(!ids.includes(other[0]!.memory.id));
  });

  test(`${name}: keyword search drops function words unless nothing else is asked, for any key id`, async () => {
    const store = getStore();
    // Quotes, hyphens and underscores in a key id must not break or widen the keyword arm.
    const [a, b] = [`${freshKey()}-x"y`, `${freshKey()}-x"y`];
    const deploy = (await store.write(a, plainWrite('the deploy runs on Fridays'), MAX, t0)).memory.id;
    const who = (await store.write(a, plainWrite('The Who played here'), MAX, t0)).memory.id;
    await store.write(a, plainWrite('it is what it is'), MAX, t0);
    await store.write(b, plainWrite('the deploy runs on Mondays'), MAX, t0);
    assert.deepEqual(searchTerms('What is the deploy day?'), ['deploy', 'day']);
    const found = await store.search(a, searchOf('when is the deploy', { mode: 'keyword' }), t0);
    assert.deepEqual(
      found.map((hit) => hit.memory.id),
      [deploy],
    );
    // A query made only of function words still searches with them (the SQLite arm has no stopword list).
    assert.deepEqual(searchTerms('The Who'), ['the', 'who']);
    const band = await store.search(a, searchOf('The Who', { mode: 'keyword' }), t0);
    if (name === 'sqlite') assert.ok(band.some((hit) => hit.memory.id === who));
    for (const hit of band) assert.notEqual(hit.memory.content, 'the deploy runs on Mondays');
  });

  test(`${name}: vectors of another model are refused until a re-embed resets them`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    assert.deepEqual(await store.embeddingModel(), MODEL);
    assert.equal(await store.adoptEmbeddingModel(MODEL), true);
    assert.equal(await store.adoptEmbeddingModel({ model: 'other', dimensions: 8 }), false);
    const a = freshKey();
    const m = (await store.write(a, plainWrite('stale vector check'), MAX, t0)).memory;
    const pending = (await store.pendingEmbeddings(10_000, 0)).find(
      (p) => p.content === 'stale vector check',
    )!;
    assert.equal(
      await store.setEmbedding(pending.rowId, contentHash('something else'), unit(1, 0, 0, 0)),
      false,
    );
    assert.equal(await store.setEmbedding(pending.rowId, pending.contentHash, unit(1, 0, 0, 0)), true);
    assert.equal((await store.get(a, m.id, t0))?.embeddingStatus, 'ready');
    const reset = await store.resetEmbeddings(MODEL);
    assert.ok(reset >= 1);
    assert.equal((await store.get(a, m.id, t0))?.embeddingStatus, 'pending');
    assert.equal(
      (await store.search(a, searchOf('zzz', { vector: unit(1, 0, 0, 0), mode: 'vector' }), t0)).length,
      0,
    );
  });

  test(`${name}: a batch of embeddings skips only the row whose content changed meanwhile`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    const a = freshKey();
    const texts = ['batch one', 'batch two', 'batch three', 'batch four'];
    const ids = [];
    for (const text of texts) ids.push((await store.write(a, plainWrite(text), MAX, t0)).memory.id);
    const pending = (await store.pendingEmbeddings(10_000, 0)).filter((p) => p.content.startsWith('batch '));
    assert.equal(pending.length, 4);
    // Edited after the indexer read it: the vector in hand belongs to the old text.
    await store.update(
      a,
      ids[1]!,
      { content: { text: 'batch two, edited', hash: contentHash('batch two, edited') } },
      t0,
    );
    const stored = await store.storeEmbeddings(
      pending.map((p, i) => ({
        rowId: p.rowId,
        contentHash: p.contentHash,
        vector: i === 3 ? null : unit(1, i, 0, 0),
      })),
    );
    assert.equal(stored, 2);
    const status = async (id: string) => (await store.get(a, id, t0))?.embeddingStatus;
    assert.deepEqual(await Promise.all(ids.map(status)), ['ready', 'pending', 'ready', 'failed']);
  });
}
