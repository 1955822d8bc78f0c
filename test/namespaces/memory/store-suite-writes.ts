/**
 * Store suite cases for the write plan's decisions (write-plan.ts) beyond the basics in
 * store-suite-rows.ts: when an upsert or a dedup writes nothing, when it re-embeds, how
 * expiry and pins meet the cap, and what `supersedes` does when the write lands elsewhere.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import {
  MemoryLimitError,
  type MemoryStore,
  SupersedesNotFoundError,
} from '../../../gateway/namespaces/memory/store/types.ts';
import { embedAll, freshKey, MAX, MODEL, t0, unit } from './store-suite-helpers.ts';

export function memoryWriteCases(name: string, getStore: () => MemoryStore): void {
  test(`${name}: an upsert that changes nothing writes nothing; only new content re-embeds`, async () => {
    const store = getStore();
    const a = freshKey();
    const text = `timezone ${a}: Europe/Berlin`;
    const first = await store.write(
      a,
      plainWrite(text, { key: 'tz', metadata: { b: '2', a: '1' } }),
      MAX,
      t0,
    );
    await store.adoptEmbeddingModel(MODEL);
    await embedAll(store, new Map([[text, unit(0, 0, 0, 1)]]));
    // Metadata given in another order is the same metadata.
    const again = await store.write(
      a,
      plainWrite(text, { key: 'tz', metadata: { a: '1', b: '2' } }),
      MAX,
      t0 + 1,
    );
    assert.equal(again.status, 'unchanged');
    assert.equal(again.memory.updatedAt, t0);
    const retagged = await store.write(
      a,
      plainWrite(text, { key: 'tz', metadata: { a: '1', b: '2' }, tags: ['geo'], pinned: true }),
      MAX,
      t0 + 2,
    );
    assert.equal(retagged.status, 'updated');
    assert.deepEqual(
      [retagged.memory.id, retagged.memory.tags, retagged.memory.pinned, retagged.memory.updatedAt],
      [first.memory.id, ['geo'], true, t0 + 2],
    );
    assert.equal(retagged.memory.embeddingStatus, 'ready', 'the same text keeps its vector');
    const moved = await store.write(
      a,
      plainWrite(`timezone ${a}: America/Denver`, { key: 'tz' }),
      MAX,
      t0 + 3,
    );
    assert.equal(moved.status, 'updated');
    assert.equal(moved.memory.embeddingStatus, 'pending');
    assert.deepEqual([moved.memory.tags, moved.memory.metadata, moved.memory.pinned], [[], {}, false]);
  });

  test(`${name}: a duplicate that adds nothing leaves the first memory untouched; a pinned one pins it`, async () => {
    const store = getStore();
    const a = freshKey();
    const first = (await store.write(a, plainWrite('badge number 1142', { tags: ['work'] }), MAX, t0)).memory;
    const same = await store.write(a, plainWrite('badge number 1142', { tags: ['work'] }), MAX, t0 + 5);
    assert.equal(same.status, 'unchanged');
    assert.deepEqual(same.memory, first);
    const pinned = await store.write(a, plainWrite('badge number 1142', { pinned: true }), MAX, t0 + 6);
    assert.deepEqual(
      [pinned.status, pinned.memory.id, pinned.memory.pinned, pinned.memory.updatedAt],
      ['unchanged', first.id, true, t0 + 6],
    );
    // An unpinned duplicate never unpins it; its new tag joins.
    const tagged = await store.write(a, plainWrite('badge number 1142', { tags: ['id'] }), MAX, t0 + 7);
    assert.deepEqual([tagged.memory.pinned, tagged.memory.tags], [true, ['work', 'id']]);
    assert.equal((await store.stats(a, t0 + 7)).count, 1);
  });

  test(`${name}: the cap counts no expired memory, evicts by last write, and spares upserts and duplicates`, async () => {
    const store = getStore();
    const a = freshKey();
    const cap = 3;
    const write = (content: string, at: number, extra: Parameters<typeof plainWrite>[1] = {}) =>
      store.write(a, plainWrite(content, extra), cap, at);
    const pinned = (await write('pinned: blood type A+', t0, { pinned: true })).memory;
    await write('expires soon', t0 + 1, { expiresAt: t0 + 10 });
    const keyed = (await write('car: blue', t0 + 2, { key: 'car' })).memory;
    const later = t0 + 20;
    const second = await write('second fact', later);
    assert.deepEqual(second.evictedIds, [], 'the expired memory made room without an eviction');
    // At the cap, rewriting a key or repeating a text adds no memory, so nothing is evicted.
    assert.deepEqual((await write('car: red', later + 1, { key: 'car' })).evictedIds, []);
    assert.deepEqual((await write('second fact', later + 2, { tags: ['x'] })).evictedIds, []);
    // "second fact" was written last (its tag merge counts), so the older upsert goes first.
    const third = await write('third fact', later + 3);
    assert.deepEqual(third.evictedIds, [keyed.id]);
    assert.ok(await store.get(a, pinned.id, later + 3));
    assert.equal((await store.stats(a, later + 3)).count, cap);
  });

  test(`${name}: a write refused by the cap changes nothing, not even the purge of expired memories`, async () => {
    const store = getStore();
    const a = freshKey();
    const old = (await store.write(a, plainWrite('pinned one', { pinned: true }), MAX, t0)).memory;
    await store.write(a, plainWrite('pinned two', { pinned: true, expiresAt: t0 + 5 }), MAX, t0);
    const everything = () => store.list(a, { includeExpired: true }, { limit: 10 }, t0 + 10);
    const before = await everything();
    assert.equal(before.memories.length, 2);
    // The expired memory is purged first; the one left is pinned, so nothing can make room.
    await assert.rejects(
      store.write(a, plainWrite('one too many', { supersedes: old.id }), 1, t0 + 10),
      MemoryLimitError,
    );
    assert.deepEqual(await everything(), before);
    assert.equal((await store.get(a, old.id, t0 + 10))?.supersededBy, null);
  });

  test(`${name}: supersedes refuses an expired memory, and a write landing on the named one supersedes nothing`, async () => {
    const store = getStore();
    const a = freshKey();
    const gone = (await store.write(a, plainWrite('old phone 555-0100', { expiresAt: t0 + 5 }), MAX, t0))
      .memory;
    const before = await store.list(a, { includeExpired: true }, { limit: 10 }, t0 + 5);
    await assert.rejects(
      store.write(a, plainWrite('new phone 555-0199', { supersedes: gone.id }), MAX, t0 + 5),
      (error: unknown) => error instanceof SupersedesNotFoundError && error.id === gone.id,
    );
    assert.deepEqual(await store.list(a, { includeExpired: true }, { limit: 10 }, t0 + 5), before);
    const fact = (await store.write(a, plainWrite('desk 4.21'), MAX, t0)).memory;
    const twin = await store.write(a, plainWrite('desk 4.21', { supersedes: fact.id }), MAX, t0 + 1);
    assert.deepEqual([twin.status, twin.memory.id], ['unchanged', fact.id]);
    assert.equal((await store.get(a, fact.id, t0 + 2))?.supersededBy, null);
    // An upsert that names another memory replaces its own and supersedes that one.
    const keyed = (await store.write(a, plainWrite('floor 4', { key: 'floor' }), MAX, t0)).memory;
    const moved = await store.write(
      a,
      plainWrite('floor 5', { key: 'floor', supersedes: fact.id }),
      MAX,
      t0 + 3,
    );
    assert.deepEqual([moved.status, moved.memory.id], ['updated', keyed.id]);
    assert.equal((await store.get(a, fact.id, t0 + 4))?.supersededBy, keyed.id);
  });

  test(`${name}: update moves a memory to another namespace, clears its expiry, and re-embeds only new text`, async () => {
    const store = getStore();
    const a = freshKey();
    const text = `locker ${a} is number 17`;
    const written = await store.write(a, plainWrite(text, { expiresAt: t0 + 100, tags: ['gym'] }), MAX, t0);
    await store.adoptEmbeddingModel(MODEL);
    await embedAll(store, new Map([[text, unit(0, 1, 1, 0)]]));
    const same = { text, hash: contentHash(text) };
    const moved = await store.update(
      a,
      written.memory.id,
      { namespace: 'gym', expiresAt: null, content: same },
      t0 + 1,
    );
    assert.deepEqual(
      [moved?.namespace, moved?.expiresAt, moved?.embeddingStatus, moved?.updatedAt, moved?.tags],
      ['gym', null, 'ready', t0 + 1, ['gym']],
    );
    assert.ok(await store.get(a, written.memory.id, t0 + 200), 'it no longer expires');
    assert.equal((await store.list(a, { namespace: 'gym' }, { limit: 10 }, t0 + 200)).memories.length, 1);
  });
}
