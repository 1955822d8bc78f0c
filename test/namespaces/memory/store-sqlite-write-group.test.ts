/**
 * The SQLite store commits the writes of one event-loop turn together. These cases pin
 * down what that must not change: each write succeeds or fails on its own, later writes
 * of the group see earlier ones, and an answered write is on disk for other connections.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { MemoryLimitError } from '../../../gateway/namespaces/memory/store/types.ts';
import { Database } from '../../../gateway/store/sqlite-driver.ts';

describe('SQLite memory writes of one turn share a commit', () => {
  let dir: string;
  let file: string;
  let store: SqliteMemoryStore;
  const now = Date.UTC(2026, 0, 1);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'memory-group-'));
    file = join(dir, 'memory.sqlite');
    store = new SqliteMemoryStore(file);
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a write refused by the cap fails alone; the rest of its group is stored', async () => {
    const results = await Promise.allSettled([
      store.write('capped', plainWrite('pinned one', { pinned: true }), 2, now),
      store.write('capped', plainWrite('pinned two', { pinned: true }), 2, now),
      store.write('capped', plainWrite('no room left', { pinned: true }), 2, now),
      store.write('other', plainWrite('another key is unaffected'), 2, now),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.ok((results[2] as PromiseRejectedResult).reason instanceof MemoryLimitError);
    assert.equal((await store.stats('capped', now)).count, 2);
    assert.equal((await store.stats('other', now)).count, 1);
  });

  test('a later write of the group sees an earlier one (dedup and upsert)', async () => {
    const [first, twin, keyed, rekeyed] = await Promise.all([
      store.write('dedup', plainWrite('same text'), 100, now),
      store.write('dedup', plainWrite('same text'), 100, now),
      store.write('dedup', plainWrite('version 1', { key: 'k' }), 100, now),
      store.write('dedup', plainWrite('version 2', { key: 'k' }), 100, now),
    ]);
    assert.equal(first.status, 'created');
    assert.equal(twin.status, 'unchanged');
    assert.equal(twin.memory.id, first.memory.id);
    assert.equal(keyed.status, 'created');
    assert.equal(rekeyed.status, 'updated');
    assert.equal(rekeyed.memory.id, keyed.memory.id);
  });

  test('answered writes are committed: another connection reads them', async () => {
    const written = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.write('seen', plainWrite(`row ${i}`), 100, now)),
    );
    const other = new Database(file, { readonly: true });
    try {
      const n = other.prepare("SELECT COUNT(*) AS n FROM memories WHERE api_key_id = 'seen'").get() as {
        n: number;
      };
      assert.equal(n.n, written.length);
    } finally {
      other.close();
    }
  });

  test('writes still queued when the store closes are committed, not dropped', async () => {
    const closing = new SqliteMemoryStore(join(dir, 'closing.sqlite'));
    const pending = [
      closing.write('late', plainWrite('queued a'), 100, now),
      closing.write('late', plainWrite('queued b'), 100, now),
    ];
    await closing.close();
    const results = await Promise.all(pending);
    assert.deepEqual(
      results.map((r) => r.status),
      ['created', 'created'],
    );
    const reopened = new SqliteMemoryStore(join(dir, 'closing.sqlite'));
    try {
      assert.equal((await reopened.stats('late', now)).count, 2);
    } finally {
      await reopened.close();
    }
  });
});
