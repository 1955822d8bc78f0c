/**
 * The Postgres store's connection settings, on the native server: every connection has
 * `hnsw.iterative_scan = strict_order` from its first statement (sent in the startup packet,
 * not by a `SET` queued behind the pool's connect event, which pg 8.23 warns about and
 * pg 9 refuses), and a vector search runs with `hnsw.ef_search` no smaller than its fetch
 * (decision 1102), in its own transaction so the pooled connection keeps the session value.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LOCAL_MODEL } from '../../../gateway/namespaces/memory/embeddings/types.ts';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import {
  efSearchFor,
  type PgAccess,
  withEfSearch,
} from '../../../gateway/namespaces/memory/store/postgres-search.ts';
import {
  memoryPgPool,
  PostgresMemoryStore,
} from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { type PgPool, withPgTransaction } from '../../../gateway/store/index.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';

let db: TestPostgres;
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

before(async () => {
  db = await createTestDatabase();
  process.on('warning', onWarning);
});
after(async () => {
  process.off('warning', onWarning);
  await db?.close();
});

const show = async (pool: PgPool, name: string) => String((await pool.query(`SHOW ${name}`)).rows[0][name]);

// First in the file: pg warns once a process, so a later test could not see it again.
test("a new store's first write and search raise no warning from the driver and find the memory", async () => {
  const store = new PostgresMemoryStore(db.url, { max: 3 });
  try {
    assert.equal(await store.adoptEmbeddingModel(LOCAL_MODEL), true);
    const written = await store.write('k', plainWrite('the heron waits by the weir'), 1000, Date.now());
    const vector = new Float32Array(LOCAL_MODEL.dimensions).fill(1 / Math.sqrt(LOCAL_MODEL.dimensions));
    const [pending] = await store.pendingEmbeddings(10, 0);
    assert.ok(pending, 'the write left an embedding to store');
    assert.equal(await store.setEmbedding(pending.rowId, pending.contentHash, vector), true);
    const found = await store.search(
      'k',
      { words: ['heron'], stems: ['heron'], vector, mode: 'hybrid', fetch: 120, filter: {} },
      Date.now(),
    );
    assert.deepEqual(
      found.candidates.map((c) => c.memory.id),
      [written.memory.id],
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    await store.close();
  }
});

test("a new connection's first statement already has the store's iterative scan", async () => {
  const pool = memoryPgPool(db.url, 1);
  try {
    // Nothing ran on this pool before: the one connection is opened by this statement.
    assert.equal(await show(pool, 'hnsw.iterative_scan'), 'strict_order');
    assert.equal(pool.totalCount, 1);
  } finally {
    await pool.end();
  }
});

test("a vector search's transaction widens hnsw.ef_search to its fetch or more, and only there", async () => {
  const pool = memoryPgPool(db.url, 1);
  const access: PgAccess = {
    q: async (sql, params) => (await pool.query(sql, params)).rows,
    tx: (_key, fn) => withPgTransaction(pool, fn),
  };
  try {
    // pgvector's library loads on its first use in a backend; only then is ef_search defined.
    await pool.query("SELECT '[1]'::vector");
    const session = await show(pool, 'hnsw.ef_search');
    assert.equal(await show(pool, 'hnsw.iterative_scan'), 'strict_order', 'kept once the library loaded');
    for (const fetch of [40, 80, 200]) {
      const ef = efSearchFor(fetch);
      assert.ok(ef >= fetch && ef > Number(session), `fetch ${fetch}: ef_search ${ef}`);
      const inside = await withEfSearch(access, ef, async (client) =>
        String((await client.query('SHOW hnsw.ef_search')).rows[0]['hnsw.ef_search']),
      );
      assert.equal(inside, String(ef));
      // The same (only) pooled connection, back with the session's value.
      assert.equal(await show(pool, 'hnsw.ef_search'), session);
    }
    assert.equal(efSearchFor(10_000), 1000, "capped at pgvector's largest ef_search");
  } finally {
    await pool.end();
  }
});
