/**
 * A memory store written before event time existed (SQLite schema 7, Postgres schema 3)
 * opens under the current build with each memory's event time set to its write time, so
 * its lists and rankings keep the order they had; new writes with an earlier event time
 * then sort among them by it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as sqliteVec from 'sqlite-vec';
import { contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { PG_MIGRATIONS } from '../../../gateway/namespaces/memory/store/postgres-schema.ts';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { registerMemoryFunctions } from '../../../gateway/namespaces/memory/store/sqlite-fts.ts';
import { SQLITE_MIGRATIONS } from '../../../gateway/namespaces/memory/store/sqlite-schema.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import type { MemoryStore } from '../../../gateway/namespaces/memory/store/types.ts';
import {
  createPgPool,
  openSqlite,
  runPgMigrations,
  runSqliteMigrations,
} from '../../../gateway/store/index.ts';
import { createTestDatabase } from '../../support/postgres.ts';

const OLD_ROWS: [string, string, number][] = [
  ['00000000-0000-4000-8000-000000000001', 'written first', 1000],
  ['00000000-0000-4000-8000-000000000002', 'written second', 2000],
];

async function checkUpgraded(store: MemoryStore): Promise<void> {
  const first = await store.get('alice', OLD_ROWS[0]![0], 5000);
  assert.equal(first?.occurredAt, 1000, 'event time is the write time');
  assert.equal(first?.createdAt, 1000);
  // A new memory about an earlier moment sorts before both old ones.
  await store.write('alice', plainWrite('written third, happened first', { occurredAt: 500 }), 100, 3000);
  const page = await store.list('alice', {}, { limit: 10, order: 'oldest' }, 5000);
  assert.deepEqual(
    page.memories.map((m) => m.content),
    ['written third, happened first', 'written first', 'written second'],
  );
}

test('a SQLite memory file of schema 7 gets event times equal to its write times', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'memory-event-upgrade-'));
  const file = join(dir, 'memory.sqlite');
  try {
    const old = openSqlite(file);
    sqliteVec.load(old);
    registerMemoryFunctions(old);
    runSqliteMigrations(old, 'memory', SQLITE_MIGRATIONS.slice(0, 7));
    const insert = old.prepare(
      `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, created_at, updated_at)
       VALUES (?, 'alice', 'default', ?, ?, ?, ?)`,
    );
    for (const [id, content, at] of OLD_ROWS) insert.run(id, content, contentHash(content), at, at);
    old.close();
    const store = new SqliteMemoryStore(file);
    try {
      await checkUpgraded(store);
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a Postgres memory schema of version 3 gets event times equal to its write times', async () => {
  const pg = await createTestDatabase();
  try {
    const pool = createPgPool(pg.url, { max: 1 });
    try {
      await runPgMigrations(pool, 'memory', PG_MIGRATIONS.slice(0, 3));
      for (const [id, content, at] of OLD_ROWS)
        await pool.query(
          `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, created_at, updated_at)
           VALUES ($1, 'alice', 'default', $2, $3, $4, $4)`,
          [id, content, contentHash(content), at],
        );
    } finally {
      await pool.end();
    }
    const store = new PostgresMemoryStore(pg.url, { max: 2 });
    try {
      await checkUpgraded(store);
    } finally {
      await store.close();
    }
  } finally {
    await pg.close();
  }
});
