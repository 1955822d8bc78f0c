/** Store suite cases for search (both arms, filters, floor, weights) and embeddings. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { queryWords } from '../../../gateway/namespaces/memory/store/text.ts';
import type { MemoryStore, WriteInput } from '../../../gateway/namespaces/memory/store/types.ts';
import { embedAll, freshKey, MAX, MODEL, searchHits, searchOf, t0, unit } from './store-suite-helpers.ts';

export function memorySearchCases(name: string, getStore: () => MemoryStore): void {
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
    const hybrid = await searchHits(store, a, searchOf('migration error', { vector: q, minScore: 0.5 }), t0);
    assert.equal(hybrid[0]?.memory.id, ids[0]);
    assert.equal(hybrid[0]?.source, 'both');
    assert.ok(hybrid.every((hit) => [ids[0], ids[1], ids[3]].includes(hit.memory.id)));
    assert.equal(hybrid.find((hit) => hit.memory.id === ids[1])?.source, 'vector');
    assert.equal(hybrid.find((hit) => hit.memory.id === ids[3])?.source, 'keyword');
    assert.ok(hybrid.find((hit) => hit.memory.id === ids[3])!.score! < 0.5);
    const vectorOnly = await searchHits(
      store,
      a,
      searchOf('migration error', { vector: q, mode: 'vector', minScore: 0.5 }),
      t0,
    );
    assert.deepEqual(
      vectorOnly.map((hit) => hit.memory.id),
      [ids[0], ids[1]],
    );
    assert.ok(vectorOnly[0]!.score! > 0.99);
    const keywordOnly = await searchHits(store, a, searchOf('E1234', { vector: q, mode: 'keyword' }), t0);
    assert.deepEqual(
      keywordOnly.map((hit) => [hit.memory.id, hit.source]),
      [[ids[0], 'keyword']],
    );
    const filtered = await searchHits(
      store,
      a,
      searchOf('tables', { vector: q, filter: { namespace: 'n2' } }),
      t0,
    );
    assert.deepEqual(
      filtered.map((hit) => hit.memory.id),
      [ids[1]],
    );
    const byTag = await searchHits(
      store,
      a,
      searchOf('error', { vector: q, filter: { tags: ['db'] }, minScore: 0.5 }),
      t0,
    );
    assert.deepEqual(new Set(byTag.map((hit) => hit.memory.id)), new Set([ids[0], ids[1]]));
    // Weight zero on the vector arm ranks by keyword alone.
    const kwWeighted = await searchHits(
      store,
      a,
      searchOf('quarter', { vector: q, weights: { vector: 0, keyword: 1 } }),
      t0,
    );
    assert.equal(kwWeighted[0]?.memory.id, ids[3]);
    for (const hit of [...hybrid, ...vectorOnly, ...filtered]) assert.ok(ids.includes(hit.memory.id));
    const other = await searchHits(store, b, searchOf('migration error', { vector: q }), t0);
    assert.equal(other.length, 1);
    assert.ok(!ids.includes(other[0]!.memory.id));
  });

  test(`${name}: when the nearest and best-matching memories are filtered out, both arms fill from the rest, in order, within the key`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    const [a, b] = [freshKey(), freshKey()];
    const now = t0 + 10_000;
    // Six memories, each farther from the query than the one before, all holding the query
    // word. The first two expire before the search, the third is superseded by the sixth:
    // the three nearest are filtered out.
    const texts = Array.from({ length: 6 }, (_, i) => `alpha ${'filler '.repeat(i)}note ${i}`);
    const vectors = texts.map((_, i) => unit(1, 0.2 * i, 0, 0));
    const ids: string[] = [];
    for (const [i, text] of texts.entries()) {
      const extra = i < 2 ? { expiresAt: t0 + 1000 } : i === 5 ? { supersedes: ids[2]! } : {};
      ids.push((await store.write(a, plainWrite(text, extra), MAX, t0 + i)).memory.id);
    }
    await embedAll(store, new Map(texts.map((text, i) => [text, vectors[i]!])));
    // Another key holds the same texts, all current and on the query: none may come back.
    for (const text of texts) await store.write(b, plainWrite(text), MAX, t0);
    await embedAll(store, new Map(texts.map((text) => [text, unit(1, 0, 0, 0)])));
    const request = {
      ...queryWords('alpha'),
      vector: unit(1, 0, 0, 0),
      mode: 'hybrid' as const,
      fetch: 3,
      filter: { currentOnly: true },
    };
    const found = await store.search(a, request, now);
    const byArm = (rank: 'vectorRank' | 'keywordRank') =>
      found.candidates
        .filter((c) => c[rank] !== null)
        .sort((x, y) => x[rank]! - y[rank]!)
        .map((c) => c.memory.id);
    assert.deepEqual(byArm('vectorRank'), [ids[3], ids[4], ids[5]]);
    // Which current ones the keyword arm ranks first is each engine's scoring (equal term counts).
    assert.deepEqual(new Set(byArm('keywordRank')), new Set([ids[3], ids[4], ids[5]]));
    for (const c of found.candidates) assert.ok(c.cosine !== null && c.keywordScore !== null);
    // With fetch 1 the first read finds nothing current; the rest is read to fill it.
    const one = await store.search(a, { ...request, fetch: 1 }, now);
    assert.deepEqual(
      one.candidates.filter((c) => c.vectorRank !== null).map((c) => [c.memory.id, c.vectorRank]),
      [[ids[3], 1]],
    );
    const keyword = one.candidates.filter((c) => c.keywordRank !== null);
    assert.equal(keyword.length, 1);
    assert.ok([ids[3], ids[4], ids[5]].includes(keyword[0]!.memory.id));
  });

  test(`${name}: keyword search drops function words unless nothing else is asked, for any key id`, async () => {
    const store = getStore();
    // Quotes, hyphens and underscores in a key id must not break or widen the keyword arm.
    const [a, b] = [`${freshKey()}-x"y`, `${freshKey()}-x"y`];
    const deploy = (await store.write(a, plainWrite('the deploy runs on Fridays'), MAX, t0)).memory.id;
    const who = (await store.write(a, plainWrite('The Who played here'), MAX, t0)).memory.id;
    await store.write(a, plainWrite('it is what it is'), MAX, t0);
    await store.write(b, plainWrite('the deploy runs on Mondays'), MAX, t0);
    assert.deepEqual(queryWords('What is the deploy day?').words, ['deploy', 'day']);
    const found = await searchHits(store, a, searchOf('when is the deploy', { mode: 'keyword' }), t0);
    assert.deepEqual(
      found.map((hit) => hit.memory.id),
      [deploy],
    );
    // A query made only of function words still searches with them (the SQLite arm has no stopword list).
    assert.deepEqual(queryWords('The Who').words, ['the', 'who']);
    const band = await searchHits(store, a, searchOf('The Who', { mode: 'keyword' }), t0);
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
      (await searchHits(store, a, searchOf('zzz', { vector: unit(1, 0, 0, 0), mode: 'vector' }), t0)).length,
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
