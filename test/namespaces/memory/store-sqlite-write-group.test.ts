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
import { SqliteWriteGroup } from '../../../gateway/namespaces/memory/store/sqlite-write-group.ts';
import { queryWords } from '../../../gateway/namespaces/memory/store/text.ts';
import { MemoryLimitError } from '../../../gateway/namespaces/memory/store/types.ts';
import { openSqlite } from '../../../gateway/store/index.ts';
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

  test('write groups keep the keyword index merged, and every memory stays findable', async () => {
    const mergedFile = join(dir, 'merging.sqlite');
    const merging = new SqliteMemoryStore(mergedFile);
    try {
      // 240 groups of 16 distinct texts: FTS5 writes one segment per commit.
      for (let g = 0; g < 240; g++) {
        await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            merging.write(
              'merged',
              plainWrite(`note ${g} ${i} word${g}x${i} shared words here`),
              10_000,
              now,
            ),
          ),
        );
      }
      const reader = new Database(mergedFile, { readonly: true });
      let segments: number;
      try {
        const automerge = reader.prepare("SELECT v FROM memories_fts_config WHERE k = 'automerge'").get() as {
          v: number;
        };
        // The commit itself merges nothing; the write group's own step does.
        assert.equal(automerge.v, 0);
        segments = (
          reader.prepare('SELECT COUNT(DISTINCT segid) AS n FROM memories_fts_idx').get() as { n: number }
        ).n;
      } finally {
        reader.close();
      }
      // Unmerged (automerge off and no step), the same writes leave 15 segments; merged, 9.
      assert.ok(segments <= 10, `${segments} keyword-index segments after 240 write groups`);
      for (const [g, i] of [
        [0, 0],
        [117, 5],
        [239, 15],
      ] as const) {
        const found = await merging.search(
          'merged',
          { ...queryWords(`word${g}x${i}`), vector: null, mode: 'keyword', fetch: 5, filter: {} },
          now,
        );
        assert.deepEqual(
          found.candidates.map((c) => c.memory.content),
          [`note ${g} ${i} word${g}x${i} shared words here`],
        );
      }
    } finally {
      await merging.close();
    }
  });

  test("a failing tidy step undoes only its own changes; the group's writes commit", async () => {
    const db = openSqlite(':memory:');
    try {
      db.exec('CREATE TABLE rows (note TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO rows (note) VALUES (?)');
      const group = new SqliteWriteGroup(db, () => {
        insert.run('tidy');
        throw new Error('tidy failed');
      });
      const written = await Promise.all(['a', 'b'].map((note) => group.run(() => insert.run(note).changes)));
      assert.deepEqual(written, [1, 1]);
      const notes = db.prepare('SELECT note FROM rows ORDER BY note').pluck().all();
      assert.deepEqual(notes, ['a', 'b']);
    } finally {
      db.close();
    }
  });
});
