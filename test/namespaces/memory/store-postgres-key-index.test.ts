/**
 * Per-key partial HNSW indexes on the native server (decision 1103), with the threshold
 * lowered by the store's setting: a key over it gets its own index once searched, a key
 * under it none; the store's own search and supersession statements are planned on it; its
 * top 10 is the exact order's; two stores racing build one; an unfinished build is dropped
 * and built again; erasing the key drops it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { memorySettings } from '../../../gateway/namespaces/memory/settings.ts';
import {
  KEY_INDEX_MIN_VECTORS,
  keyIndexName,
} from '../../../gateway/namespaces/memory/store/postgres-key-index.ts';
import { vectorLiteral } from '../../../gateway/namespaces/memory/store/postgres-schema.ts';
import { candidateQuery, efSearchFor } from '../../../gateway/namespaces/memory/store/postgres-search.ts';
import {
  memoryPgPool,
  PostgresMemoryStore,
} from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { SUPERSEDE_KEY_INDEX_SQL } from '../../../gateway/namespaces/memory/store/postgres-supersede.ts';
import type { SearchRequest } from '../../../gateway/namespaces/memory/store/types.ts';
import { pgRows, seedKeyRows } from '../../support/pg-memory-rows.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';

const THRESHOLD = 800;
/**
 * Small vectors keep the builds to seconds; the planner's choice does not turn on the width.
 * At 1,200 of a key's rows it sorted them exactly (cheaper than any index); from a few
 * thousand on it walks the key's own index at the default fetch.
 */
const MODEL = { model: 'key-index-test', dimensions: 16 };
const DIMS = MODEL.dimensions;
/** Key ids shaped like the product's, so a test can see one never reaches a log line. */
const BIG = 'key_big_7f3a';
const SMALL = 'key_small_19c2';
const RACE = 'key_race_b801';
const CLOSING = 'key_closing_5d1e';

let db: TestPostgres;
let store: PostgresMemoryStore;
const lines: string[] = [];
const log = {
  info: (fields: Record<string, unknown>, message: string) =>
    lines.push(JSON.stringify({ ...fields, message })),
  warn: (fields: Record<string, unknown>, message: string) =>
    lines.push(JSON.stringify({ ...fields, message })),
};

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  pgRows<T>(db.url, text, params);
const seed = (key: string, n: number) => seedKeyRows(db.url, key, n, DIMS);

const randomVector = () => Float32Array.from({ length: DIMS }, () => Math.random() - 0.5);
const request = (vector: Float32Array): SearchRequest => ({
  words: [],
  stems: [],
  vector,
  mode: 'vector',
  fetch: 40,
  filter: { currentOnly: true },
});

/** The key's indexes on memory_vectors other than the table-wide ones, with validity. */
async function keyIndexes(key: string): Promise<{ name: string; valid: boolean }[]> {
  return sql(
    `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'memory_vectors'::regclass AND pg_get_expr(i.indpred, i.indrelid) LIKE '%' || $1 || '%'`,
    [key],
  );
}

/** Backends whose statement starts with `prefix` and waits on a lock. */
async function waitingOn(prefix: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 || '%' AND wait_event_type = 'Lock'`,
    [prefix],
  );
  return row!.n;
}

/** Polls `check` every 20 ms, at most `tries` times; true once it held. */
async function eventually(check: () => Promise<boolean>, tries = 1500): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** EXPLAIN of a statement on the store's kind of connection, under its search transaction. */
async function plan(text: string, params: unknown[], ef: number): Promise<string> {
  const pool = memoryPgPool(db.url, 1);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('hnsw.ef_search', $1, true)", [String(ef)]);
    const { rows } = await client.query(`EXPLAIN ${text}`, params);
    await client.query('ROLLBACK');
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  } finally {
    client.release();
    await pool.end();
  }
}

before(async () => {
  db = await createTestDatabase();
  store = new PostgresMemoryStore(db.url, { max: 3, keyIndexMinVectors: THRESHOLD, log });
  assert.equal(await store.adoptEmbeddingModel(MODEL), true);
  // Loaded without the table-wide index, which is built once after, as the bench does.
  await sql('DROP INDEX memory_vectors_hnsw');
  await seed('key_crowd_0000', 8000);
  await seed(BIG, 5000);
  await seed(SMALL, 400);
  await seed(RACE, 900);
  await seed(CLOSING, 900);
  await sql('CREATE INDEX memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops)');
  await sql('ANALYZE memories');
  await sql('ANALYZE memory_vectors');
});
after(async () => {
  await store?.close();
  await db?.close();
});

test('MEMORY_KEY_INDEX_VECTORS is read as a whole number, 0 or more', () => {
  assert.equal(memorySettings.parse({ MEMORY_KEY_INDEX_VECTORS: '800' }).MEMORY_KEY_INDEX_VECTORS, 800);
  assert.equal(memorySettings.parse({ MEMORY_KEY_INDEX_VECTORS: '0' }).MEMORY_KEY_INDEX_VECTORS, 0);
  assert.equal(memorySettings.safeParse({ MEMORY_KEY_INDEX_VECTORS: '-1' }).success, false);
  // Written out in the settings (they load before the store): the same default as the store's.
  assert.equal(memorySettings.parse({}).MEMORY_KEY_INDEX_VECTORS, KEY_INDEX_MIN_VECTORS);
});

test('a searched key over the threshold gets its own index, named by a hash; a key under it none', async () => {
  assert.deepEqual(await keyIndexes(BIG), [], 'no index before the first search');
  await store.search(BIG, request(randomVector()), Date.now());
  await store.search(SMALL, request(randomVector()), Date.now());
  await store.keyIndexes.idle();
  assert.deepEqual(await keyIndexes(BIG), [{ name: keyIndexName(BIG), valid: true }]);
  assert.deepEqual(await keyIndexes(SMALL), []);
  assert.doesNotMatch(keyIndexName(BIG), /big/);
  assert.ok(
    lines.some((line) => line.includes('per-key vector index built')),
    lines.join('\n'),
  );
  assert.ok(!lines.some((line) => line.includes(BIG)), 'a log line named the key id');
});

test("the store's search and supersession statements are planned on the key's index", async () => {
  await store.keyIndexes.ensure(BIG);
  const query = candidateQuery(BIG, request(randomVector()), Date.now(), {
    vectors: true,
    useVector: true,
    useKeyword: false,
  });
  const searchPlan = await plan(query.sql, query.params, efSearchFor(40));
  assert.match(searchPlan, new RegExp(`Index Scan using ${keyIndexName(BIG)}`), searchPlan);
  const [row] = await sql<{ id: string }>('SELECT id FROM memories WHERE api_key_id = $1 LIMIT 1', [BIG]);
  const supersedePlan = await plan(SUPERSEDE_KEY_INDEX_SQL, [row!.id, 0.2, 16, BIG], efSearchFor(16));
  assert.match(supersedePlan, new RegExp(`Index Scan using ${keyIndexName(BIG)}`), supersedePlan);
});

test("the key's index gives the exact order's top 10", async () => {
  for (let i = 0; i < 5; i++) {
    const vector = randomVector();
    const found = await store.search(BIG, request(vector), Date.now());
    const top = found.candidates
      .filter((c) => c.vectorRank !== null && c.vectorRank <= 10)
      .sort((a, b) => a.vectorRank! - b.vectorRank!)
      .map((c) => c.memory.id);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_indexscan = off');
      const exact = await client.query(
        `SELECT m.public_id FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
          WHERE v.api_key_id = $1 ORDER BY v.embedding <=> $2::vector LIMIT 10`,
        [BIG, vectorLiteral(vector)],
      );
      await client.query('COMMIT');
      assert.deepEqual(
        top,
        exact.rows.map((r: { public_id: string }) => r.public_id),
      );
    } finally {
      await client.end();
    }
  }
});

test('supersession on a key with its own index finds the near-duplicate through it', async () => {
  const [older] = await sql<{ id: string; public_id: string }>(
    'SELECT id, public_id FROM memories WHERE api_key_id = $1 ORDER BY id LIMIT 1',
    [BIG],
  );
  // A later memory with the older one's vector: a near-duplicate by any threshold.
  const [newer] = await sql<{ id: string; public_id: string }>(
    `WITH m AS (
       INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status,
                             created_at, updated_at, occurred_at)
       VALUES (gen_random_uuid(), $1, 'default', 'the newer note', md5('the newer note'), 'ready', 9e6, 9e6, 9e6)
       RETURNING id, public_id),
     v AS (
       INSERT INTO memory_vectors (memory_id, api_key_id, embedding)
       SELECT m.id, $1, (SELECT embedding FROM memory_vectors WHERE memory_id = $2)
         FROM m)
     SELECT id, public_id FROM m`,
    [BIG, older!.id],
  );
  assert.equal(await store.supersedeSimilar([Number(newer!.id)], 0.999), 1);
  const [row] = await sql<{ superseded_by: string | null }>(
    'SELECT superseded_by FROM memories WHERE id = $1',
    [older!.id],
  );
  assert.equal(row!.superseded_by, newer!.public_id);
});

test('two stores racing to build the same key end with one valid index', async () => {
  const other = new PostgresMemoryStore(db.url, { max: 2, keyIndexMinVectors: THRESHOLD });
  try {
    const outcomes = await Promise.all([store.keyIndexes.ensure(RACE), other.keyIndexes.ensure(RACE)]);
    assert.ok(outcomes.includes('built'), outcomes.join(', '));
    assert.ok(
      outcomes.every((o) => o === 'built' || o === 'busy' || o === 'present'),
      outcomes.join(', '),
    );
    assert.deepEqual(await keyIndexes(RACE), [{ name: keyIndexName(RACE), valid: true }]);
    assert.equal(await other.keyIndexes.ensure(RACE), 'present');
  } finally {
    await other.close();
  }
});

test('an unfinished build (an invalid index) is dropped and built again', async () => {
  // What an interrupted CREATE INDEX CONCURRENTLY leaves behind.
  await sql('UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass', [keyIndexName(RACE)]);
  assert.deepEqual(await keyIndexes(RACE), [{ name: keyIndexName(RACE), valid: false }]);
  assert.equal(await store.keyIndexes.ensure(RACE), 'built');
  assert.deepEqual(await keyIndexes(RACE), [{ name: keyIndexName(RACE), valid: true }]);
  assert.ok(lines.some((line) => line.includes('dropping an unfinished per-key vector index')));
});

test('closing a store cancels its build under way and leaves no index behind', async () => {
  const other = new PostgresMemoryStore(db.url, { max: 2, keyIndexMinVectors: THRESHOLD, log });
  // An open transaction that writes to the table holds a CONCURRENTLY build at its first wait.
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE memory_vectors IN ROW EXCLUSIVE MODE');
    const building = other.keyIndexes.ensure(CLOSING);
    assert.ok(await eventually(async () => (await waitingOn('CREATE INDEX CONCURRENTLY')) > 0));
    const closed = other.close();
    // Cancelled, the build drops what it had made, and that waits for the holder too;
    // uncancelled, it would still wait to build.
    assert.ok(
      await eventually(async () => (await waitingOn('DROP INDEX CONCURRENTLY')) > 0),
      'the build was not cancelled',
    );
    await holder.query('ROLLBACK');
    assert.equal(await building, 'closed');
    await closed;
  } finally {
    await holder.end();
  }
  assert.deepEqual(await keyIndexes(CLOSING), []);
  assert.ok(lines.some((line) => line.includes('build stopped: the store is closing')));
});

test("erasing a key's memories drops its index; deleting a few keeps it", async () => {
  const [some] = await sql<{ public_id: string }>(
    'SELECT public_id FROM memories WHERE api_key_id = $1 LIMIT 1',
    [RACE],
  );
  await store.deleteMany(
    RACE,
    { ids: [some!.public_id] },
    { dryRun: false, includePinned: true },
    Date.now(),
  );
  await store.keyIndexes.idle();
  assert.equal((await keyIndexes(RACE)).length, 1, 'one delete dropped the index');
  const erased = await store.deleteMany(
    RACE,
    { filter: {} },
    { dryRun: false, includePinned: true },
    Date.now(),
  );
  assert.equal(erased.deleted, 899);
  await store.keyIndexes.idle();
  assert.deepEqual(await keyIndexes(RACE), []);
  assert.deepEqual((await keyIndexes(BIG)).length, 1, "another key's index stays");
});
