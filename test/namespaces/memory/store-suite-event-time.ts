/**
 * Store suite cases for event time (occurred_at): what is stored when the writer gives one
 * or not, how upserts and updates carry it, list order and filters, the automatic
 * supersession going by it, and batched writes (the import command's writeMany).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { MemoryLimitError, type MemoryStore } from '../../../gateway/namespaces/memory/store/types.ts';
import { freshKey, MAX, MODEL, t0, unit } from './store-suite-helpers.ts';

const DAY = 86_400_000;

async function listed(store: MemoryStore, key: string, order: 'newest' | 'oldest', filter = {}) {
  const ids: string[] = [];
  let cursor: string | undefined;
  // Pages of two, so the cursor has to resume inside a run of equal event times.
  do {
    const page = await store.list(key, filter, { limit: 2, order, ...(cursor ? { cursor } : {}) }, t0 + 100);
    ids.push(...page.memories.map((m) => m.content));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

export function memoryEventTimeCases(name: string, getStore: () => MemoryStore): void {
  test(`${name}: occurred_at is stored as given, else the write time; lists go by it, ties in write order`, async () => {
    const store = getStore();
    const a = freshKey();
    const plain = await store.write(a, plainWrite('written now, no event time'), MAX, t0);
    assert.equal(plain.memory.occurredAt, t0);
    assert.equal(plain.memory.createdAt, t0);
    const at = (content: string, occurredAt: number, now: number) =>
      store.write(a, plainWrite(content, { occurredAt }), MAX, now);
    const old = await at('last year', t0 - 365 * DAY, t0 + 1);
    assert.deepEqual([old.memory.occurredAt, old.memory.createdAt], [t0 - 365 * DAY, t0 + 1]);
    assert.equal((await store.get(a, old.memory.id, t0 + 2))?.occurredAt, t0 - 365 * DAY);
    // Three memories of one event time, written in the order first, second, third.
    await at('tie first', t0 - DAY, t0 + 2);
    await at('tie second', t0 - DAY, t0 + 3);
    await at('tie third', t0 - DAY, t0 + 4);
    await at('last month', t0 - 30 * DAY, t0 + 5);
    assert.deepEqual(await listed(store, a, 'newest'), [
      'written now, no event time',
      'tie third',
      'tie second',
      'tie first',
      'last month',
      'last year',
    ]);
    assert.deepEqual(await listed(store, a, 'oldest'), [
      'last year',
      'last month',
      'tie first',
      'tie second',
      'tie third',
      'written now, no event time',
    ]);
    // Both bounds are exclusive, as created_after/before are.
    assert.deepEqual(await listed(store, a, 'oldest', { occurredAfter: t0 - 30 * DAY, occurredBefore: t0 }), [
      'tie first',
      'tie second',
      'tie third',
    ]);
    assert.deepEqual(await listed(store, a, 'oldest', { occurredBefore: t0 - 30 * DAY }), ['last year']);
    const deleted = await store.deleteMany(
      a,
      { filter: { occurredBefore: t0 - 2 * DAY } },
      { dryRun: true, includePinned: false },
      t0 + 6,
    );
    assert.equal(deleted.matched, 2);
  });

  test(`${name}: an upsert keeps the stored event time unless given one or new content; update likewise`, async () => {
    const store = getStore();
    const a = freshKey();
    const first = await store.write(a, plainWrite('plan A', { key: 'plan', occurredAt: t0 - DAY }), MAX, t0);
    const again = await store.write(a, plainWrite('plan A', { key: 'plan' }), MAX, t0 + 1);
    assert.equal(again.status, 'unchanged', 'a repeated write without occurred_at changes nothing');
    assert.equal(again.memory.occurredAt, t0 - DAY);
    const redated = await store.write(
      a,
      plainWrite('plan A', { key: 'plan', occurredAt: t0 - 2 * DAY }),
      MAX,
      t0 + 2,
    );
    assert.deepEqual([redated.status, redated.memory.occurredAt], ['updated', t0 - 2 * DAY]);
    const changed = await store.write(a, plainWrite('plan B', { key: 'plan' }), MAX, t0 + 3);
    assert.deepEqual(
      [changed.status, changed.memory.id, changed.memory.occurredAt],
      ['updated', first.memory.id, t0 + 3],
    );

    const id = first.memory.id;
    assert.equal((await store.update(a, id, { tags: ['x'] }, t0 + 4))?.occurredAt, t0 + 3, 'tags keep it');
    assert.equal((await store.update(a, id, { occurredAt: t0 - 7 * DAY }, t0 + 5))?.occurredAt, t0 - 7 * DAY);
    const text = (t: string) => ({ text: t, hash: t });
    assert.equal((await store.update(a, id, { content: text('plan C') }, t0 + 6))?.occurredAt, t0 + 6);
    const both = await store.update(a, id, { content: text('plan D'), occurredAt: t0 - DAY }, t0 + 7);
    assert.deepEqual([both?.occurredAt, both?.updatedAt], [t0 - DAY, t0 + 7]);
  });

  test(`${name}: the automatic update rule goes by event time: a late write about the past is superseded, not superseding`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    const a = freshKey();
    const write = async (content: string, occurredAt: number, now: number) =>
      (await store.write(a, plainWrite(content, { occurredAt }), MAX, now)).memory;
    // Written first but happened last: the current fact.
    const current = await write('office moved to Lisbon in March', t0 - DAY, t0);
    // Written later, about before: an imported history line.
    const history = await write('office was in Porto in January', t0 - 60 * DAY, t0 + 1);
    const earliest = await write('office was in Braga last year', t0 - 300 * DAY, t0 + 2);
    // Same event time as `current`, written after it: the later write is the newer statement.
    const tie = await write('office moved to Lisbon in March, third floor', t0 - DAY, t0 + 3);
    const vectors = new Map([
      [current.content, unit(1, 0.02, 0, 0)],
      [history.content, unit(1, 0.04, 0, 0)],
      [earliest.content, unit(1, 0.06, 0, 0)],
      [tie.content, unit(1, 0.03, 0, 0)],
    ]);
    const rows = (await store.pendingEmbeddings(100_000, 0)).filter((row) => vectors.has(row.content));
    await store.storeEmbeddings(rows.map((row) => ({ ...row, vector: vectors.get(row.content)! })));
    assert.ok(
      (await store.supersedeSimilar(
        rows.map((row) => row.rowId),
        0.95,
      )) >= 3,
    );
    const by = async (id: string) => (await store.get(a, id, t0 + 10))?.supersededBy ?? null;
    assert.equal(await by(tie.id), null, 'the latest in event order, then write order, stays current');
    for (const older of [current, history, earliest])
      assert.notEqual(await by(older.id), null, older.content);
    // Each one points at something after it in event order, never before.
    const order = [earliest.id, history.id, current.id, tie.id];
    for (const older of [current, history, earliest])
      assert.ok(order.indexOf((await by(older.id))!) > order.indexOf(older.id), older.content);
  });

  test(`${name}: writeMany writes a batch by the write rule; without eviction the cap stops it and keeps what came before`, async () => {
    const store = getStore();
    const a = freshKey();
    await store.write(a, plainWrite('already here', { key: 'k0' }), 4, t0);
    const inputs = [
      plainWrite('one', { occurredAt: t0 - 3 * DAY }),
      plainWrite('already here', { key: 'k0' }),
      plainWrite('two', { key: 'k2' }),
      // Later lines of the batch meet earlier ones: the same text folds, the same key upserts.
      plainWrite('one'),
      plainWrite('two, revised', { key: 'k2' }),
      plainWrite('three'),
      plainWrite('four'),
      plainWrite('five'),
    ];
    const out = await store.writeMany(a, inputs, { maxPerKey: 4, evict: false }, t0 + 1);
    assert.deepEqual(
      out.results.map((r) => r.status),
      ['created', 'unchanged', 'created', 'unchanged', 'updated', 'created'],
    );
    assert.equal(out.results[0]!.memory.occurredAt, t0 - 3 * DAY);
    assert.equal(out.results[3]!.memory.id, out.results[0]!.memory.id);
    assert.equal(out.results[4]!.memory.id, out.results[2]!.memory.id);
    assert.equal(out.refused?.index, 6);
    assert.ok(out.refused?.error instanceof MemoryLimitError);
    assert.equal(
      (await store.stats(a, t0 + 2)).count,
      4,
      'nothing before the refusal was lost, nothing after written',
    );
    assert.deepEqual(await listed(store, a, 'oldest'), ['one', 'already here', 'two, revised', 'three']);
    // With eviction (as memory_write does) the batch goes on, evicting the least recently written.
    const evicting = await store.writeMany(
      a,
      [plainWrite('six'), plainWrite('seven')],
      { maxPerKey: 4, evict: true },
      t0 + 3,
    );
    assert.deepEqual(
      evicting.results.map((r) => r.evictedIds.length),
      [1, 1],
    );
    assert.equal(evicting.refused, null);
    assert.equal((await store.stats(a, t0 + 4)).count, 4);
  });
}
