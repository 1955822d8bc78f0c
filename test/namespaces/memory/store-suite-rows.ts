/** Store suite cases for writing, reading, listing, deleting and counting memories. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { CursorError, contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import {
  MemoryLimitError,
  type MemoryStore,
  type WriteInput,
} from '../../../gateway/namespaces/memory/store/types.ts';
import { embedAll, freshKey, MAX, MODEL, searchHits, searchOf, t0, unit } from './store-suite-helpers.ts';

export function memoryRowCases(name: string, getStore: () => MemoryStore): void {
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
    assert.equal((await searchHits(store, b, searchOf('deploy Fridays'), t0)).length, 0);
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
    assert.equal((await searchHits(store, a, searchOf('door code'), later)).length, 1);
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
    assert.equal((await searchHits(store, a, vectorOnly, t0 + 2)).length, 0);
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

  test(`${name}: cursors show no row numbers and open only for the key they were given to`, async () => {
    const store = getStore();
    const [a, b] = [freshKey(), freshKey()];
    const texts = [0, 1, 2].map((i) => `cursor ${a} ${i}`);
    await store.write(a, plainWrite(texts[0]!), MAX, t0);
    // b's rows, numbered by the store between a's, would show as a gap in a's row numbers.
    for (let i = 0; i < 7; i++) await store.write(b, plainWrite(`cursor ${b} ${i}`), MAX, t0);
    for (const text of texts.slice(1)) await store.write(a, plainWrite(text), MAX, t0 + 1);
    const rows = (await store.pendingEmbeddings(100_000, 0))
      .filter((row) => texts.includes(row.content))
      .map((row) => row.rowId);
    assert.equal(rows.length, 3);
    const pages = [
      (cursor?: string) =>
        store.list(a, {}, { limit: 1, order: 'oldest', ...(cursor ? { cursor } : {}) }, t0 + 2),
      (cursor?: string) =>
        store.list(a, {}, { limit: 1, order: 'newest', ...(cursor ? { cursor } : {}) }, t0 + 2),
      (cursor?: string) =>
        store.export(a, { limit: 1, maxBytes: 1 << 20, ...(cursor ? { cursor } : {}) }, t0 + 2),
    ];
    for (const page of pages) {
      const first = await page();
      const cursor = first.nextCursor!;
      let shown: unknown = null;
      try {
        shown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {}
      for (const row of rows)
        assert.ok(!(Array.isArray(shown) && shown.includes(row)), `cursor shows row ${row}`);
      assert.equal((await page(cursor)).memories.length, 1);
      await assert.rejects(store.list(b, {}, { limit: 1, order: 'oldest', cursor }, t0 + 2), CursorError);
      await assert.rejects(store.list(b, {}, { limit: 1, order: 'newest', cursor }, t0 + 2), CursorError);
      await assert.rejects(store.export(b, { limit: 1, maxBytes: 1 << 20, cursor }, t0 + 2), CursorError);
    }
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
  test(`${name}: the pending count (mcp_namespace_backlog) spans every key and drops as rows are done`, async () => {
    const store = getStore();
    await store.adoptEmbeddingModel(MODEL);
    // The store is shared by the suite's cases: only the change this case makes is counted.
    const before = await store.pendingEmbeddingCount();
    const [a, b] = [freshKey(), freshKey()];
    await store.write(a, plainWrite('backlog one'), MAX, t0 + 1);
    await store.write(b, plainWrite('backlog two'), MAX, t0 + 1);
    assert.equal(await store.pendingEmbeddingCount(), before + 2);
    const pending = (await store.pendingEmbeddings(100_000, 0)).filter((p) =>
      p.content.startsWith('backlog '),
    );
    await store.markEmbeddingFailed(pending[0]!.rowId, pending[0]!.contentHash);
    assert.equal(await store.pendingEmbeddingCount(), before + 1);
    assert.equal(
      await store.setEmbedding(pending[1]!.rowId, pending[1]!.contentHash, unit(1, 0, 0, 0)),
      true,
    );
    assert.equal(await store.pendingEmbeddingCount(), before);
  });
}
