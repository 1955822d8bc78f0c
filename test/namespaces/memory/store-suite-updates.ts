/** Store suite cases for knowledge updates (supersedes, the automatic rule) and keyword matching. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { type MemoryStore, SupersedesNotFoundError } from '../../../gateway/namespaces/memory/store/types.ts';
import { freshKey, MAX, MODEL, searchHits, searchOf, t0, unit } from './store-suite-helpers.ts';

/** Stores the chosen vector of every pending row of `key`; returns their row ids, oldest first. */
async function embedKey(store: MemoryStore, vectors: Map<string, Float32Array>): Promise<number[]> {
  const rows = (await store.pendingEmbeddings(100_000, 0)).filter((row) => vectors.has(row.content));
  await store.storeEmbeddings(rows.map((row) => ({ ...row, vector: vectors.get(row.content)! })));
  return rows.map((row) => row.rowId);
}

export function memoryUpdateCases(name: string, getStore: () => MemoryStore): void {
  test(`${name}: supersedes hides the older memory from search until its replacement is deleted`, async () => {
    const store = getStore();
    const a = freshKey();
    const old = (await store.write(a, plainWrite('home office is in Portland'), MAX, t0)).memory;
    const before = await store.stats(a, t0);
    await assert.rejects(
      store.write(
        a,
        plainWrite('home office is in Austin', { supersedes: crypto.randomUUID() }),
        MAX,
        t0 + 1,
      ),
      SupersedesNotFoundError,
    );
    assert.deepEqual(await store.stats(a, t0 + 1), before, 'a refused write stores nothing');
    // Another key's id is as unknown as a made-up one.
    await assert.rejects(
      store.write(freshKey(), plainWrite('x', { supersedes: old.id }), MAX, t0 + 1),
      SupersedesNotFoundError,
    );
    const current = (
      await store.write(a, plainWrite('home office is in Austin', { supersedes: old.id }), MAX, t0 + 2)
    ).memory;
    assert.equal((await store.get(a, old.id, t0 + 3))?.supersededBy, current.id);
    const search = (filter = {}) =>
      searchHits(store, a, searchOf('office', { mode: 'keyword', filter }), t0 + 3);
    assert.deepEqual(
      (await search({ currentOnly: true })).map((hit) => hit.memory.id),
      [current.id],
    );
    assert.deepEqual(new Set((await search()).map((hit) => hit.memory.id)), new Set([old.id, current.id]));
    await store.delete(a, current.id, t0 + 4);
    assert.equal((await store.get(a, old.id, t0 + 5))?.supersededBy, null);
    assert.deepEqual(
      (await search({ currentOnly: true })).map((hit) => hit.memory.id),
      [old.id],
    );
  });

  test(`${name}: a newer memory close in meaning supersedes older ones of its namespace, never pinned or keyed ones`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    const a = freshKey();
    const texts: [string, Float32Array, Partial<Parameters<typeof plainWrite>[1]>][] = [
      ['lives in Portland near the river', unit(1, 0.05, 0, 0), {}],
      ['pinned: walks the dog at seven', unit(0, 1, 0, 0.05), { pinned: true }],
      ['keyed: walks the dog at seven', unit(0, 1, 0, 0.08), { key: 'walk' }],
      ['other namespace: walks the dog', unit(0, 1, 0, 0.1), { namespace: 'elsewhere' }],
      ['likes green tea', unit(0, 0, 1, 0), {}],
      ['moved to Austin this spring', unit(1, 0.1, 0, 0), {}],
      ['walks the dog at eight now', unit(0, 1, 0, 0.12), {}],
    ];
    const ids: string[] = [];
    for (const [i, [content, , extra]] of texts.entries())
      ids.push((await store.write(a, plainWrite(content, extra), MAX, t0 + i)).memory.id);
    const rows = await embedKey(store, new Map(texts.map(([content, vector]) => [content, vector])));
    // A threshold of 1 is the rule switched off.
    assert.equal(await store.supersedeSimilar(rows, 1), 0);
    assert.equal(await store.supersedeSimilar(rows, 0.95), 1);
    const by = async (i: number) => (await store.get(a, ids[i]!, t0 + 10))?.supersededBy;
    assert.equal(await by(0), ids[5]);
    for (const i of [1, 2, 3, 4, 5, 6]) assert.equal(await by(i), null, texts[i]![0]);
  });

  test(`${name}: keyword matching uses plain Porter stems: "user" is not "use", possessives add nothing`, async () => {
    const store = getStore();
    const a = freshKey();
    const write = async (content: string) => (await store.write(a, plainWrite(content), MAX, t0)).memory.id;
    const tool = await write('I use vim and I am using it daily');
    const users = await write('the users asked for a dark theme');
    const bike = await write("Dana's bike is red");
    await write("It's raining and that's fine");
    const found = async (query: string) =>
      (await searchHits(store, a, searchOf(query, { mode: 'keyword' }), t0)).map((hit) => hit.memory.id);
    assert.deepEqual(await found('theme user'), [users]);
    assert.deepEqual(await found('uses'), [tool]);
    // "user's" carries no word of its own; "bikes" finds "bike".
    assert.deepEqual(await found("Which bikes are the user's?"), [bike]);
  });

  test(`${name}: another key's memories do not change a key's keyword relevance or order`, async () => {
    const store = getStore();
    const [a, b] = [freshKey(), freshKey()];
    for (const content of ['coffee with oat milk', 'green tea in the morning', 'coffee beans from Kenya'])
      await store.write(a, plainWrite(content), MAX, t0);
    const ranked = async () =>
      (await searchHits(store, a, searchOf('kenya coffee morning', { mode: 'keyword' }), t0)).map((hit) => [
        hit.memory.content,
        hit.keyword,
      ]);
    const alone = await ranked();
    for (let i = 0; i < 150; i++) await store.write(b, plainWrite(`coffee note ${i} from Kenya`), MAX, t0);
    assert.deepEqual(await ranked(), alone);
    assert.equal(alone[0]![0], 'coffee beans from Kenya');
  });
}
