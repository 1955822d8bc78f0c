/**
 * A memory file written by the first schema version (float vectors in one vec0 table,
 * counts by COUNT(*)) opens under the current build with its vectors carried over,
 * through version 2's vec0 sign bits and version 5's plain bit table.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as sqliteVec from 'sqlite-vec';
import { contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { SQLITE_MIGRATIONS } from '../../../gateway/namespaces/memory/store/sqlite-schema.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { queryWords } from '../../../gateway/namespaces/memory/store/text.ts';
import { openSqlite, runSqliteMigrations } from '../../../gateway/store/index.ts';

const VERSION_1_VECTORS = `
  CREATE VIRTUAL TABLE memories_vec USING vec0(
    memory_id INTEGER PRIMARY KEY, api_key_id TEXT PARTITION KEY, embedding float[4] distance_metric=cosine
  );
  CREATE TRIGGER memories_vec_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_vec WHERE memory_id = old.id;
  END;
`;

test('a version-1 memory file keeps its vectors and gets per-key counts', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'memory-upgrade-'));
  const file = join(dir, 'memory.sqlite');
  try {
    const old = openSqlite(file);
    sqliteVec.load(old);
    runSqliteMigrations(old, 'memory', SQLITE_MIGRATIONS.slice(0, 1));
    old.exec(VERSION_1_VECTORS);
    old
      .prepare('INSERT INTO memory_settings (name, value) VALUES (?, ?)')
      .run('embedding_model', JSON.stringify({ model: 'test-axes', dimensions: 4 }));
    const insert = old.prepare(
      `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status, created_at, updated_at)
       VALUES (?, ?, 'default', ?, ?, 'ready', 1, 1)`,
    );
    const vectors = old.prepare(
      'INSERT INTO memories_vec (memory_id, api_key_id, embedding) VALUES (?, ?, ?)',
    );
    const rows: [string, string, string, number[]][] = [
      ['00000000-0000-4000-8000-000000000001', 'alice', 'north star', [1, 0, 0, 0]],
      ['00000000-0000-4000-8000-000000000002', 'alice', 'south pole', [0, 1, 0, 0]],
      ['00000000-0000-4000-8000-000000000003', 'bob', 'north wind', [1, 0, 0, 0]],
    ];
    for (const [id, key, content, vector] of rows) {
      const { lastInsertRowid } = insert.run(id, key, content, contentHash(content));
      vectors.run(BigInt(lastInsertRowid), key, new Float32Array(vector));
    }
    old.close();

    const store = new SqliteMemoryStore(file);
    try {
      const found = await store.search(
        'alice',
        {
          ...queryWords('unrelated'),
          vector: new Float32Array([0.9, 0.1, 0, 0]),
          mode: 'vector',
          fetch: 5,
          filter: {},
        },
        2,
      );
      const hits = found.candidates.toSorted((a, b) => b.cosine! - a.cosine!);
      assert.deepEqual(
        hits.map((h) => h.memory.content),
        ['north star', 'south pole'],
      );
      assert.ok(hits[0]!.cosine! > 0.99);
      // Version 5 moved the sign bits out of vec0 into the plain table, counted per key.
      const look = openSqlite(file);
      try {
        assert.equal(
          look.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get(),
          undefined,
        );
        assert.deepEqual(
          look.prepare('SELECT api_key_id, n FROM memory_bit_counts ORDER BY api_key_id').all(),
          [
            { api_key_id: 'alice', n: 2 },
            { api_key_id: 'bob', n: 1 },
          ],
        );
      } finally {
        look.close();
      }
      // The cap reads the carried-over count: a cap of 2 evicts alice's oldest, not bob's.
      const written = await store.write('alice', plainWrite('east gate'), 2, 3);
      assert.deepEqual(written.evictedIds, ['00000000-0000-4000-8000-000000000001']);
      assert.equal((await store.stats('bob', 3)).count, 1);
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
