/**
 * Automatic supersession on the native server, counted in round trips (decision 1104): a
 * write batch of keys without an index of their own sends its statements and nothing
 * else, whether or not other keys have one; a key's own index is found without asking the
 * catalogue each batch, and its neighbour scan runs with `hnsw.ef_search` 80 for its
 * transaction only (decision 1102). Across gateways on one server, a build elsewhere is
 * used once the recheck comes round (or at once when a search finds the key indexed), and
 * a drop elsewhere never fails a statement. Statements are captured as pg sends them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { keyIndexName } from '../../../gateway/namespaces/memory/store/postgres-key-index.ts';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import {
  SUPERSEDE_EXACT_SQL,
  SUPERSEDE_KEY_INDEX_SQL,
} from '../../../gateway/namespaces/memory/store/postgres-supersede.ts';
import { pgRows, seedKeyRows } from '../../support/pg-memory-rows.ts';
import { captureStatements, type StatementCapture } from '../../support/pg-statements.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';

const THRESHOLD = 200;
const MODEL = { model: 'supersede-test', dimensions: 16 };
const DIMS = MODEL.dimensions;
const CROWD = 'key_crowd_0a41';
/** Gets an index of its own early on. */
const BIG = 'key_big_3c7d';
/** Built by one gateway, seen by two others, then dropped. */
const SHARED = 'key_shared_91be';
/** Never indexed: its memories are written through the store, as the indexer does. */
const PLAIN = 'key_plain_62e0';
const MIN_SIMILARITY = 0.95;

/** The statements a batch may send, by short names (any other statement is shown by its start). */
const EXACT = 'exact neighbours';
const ON_INDEX = "neighbours on the key's index";
const SET_EF = "SELECT set_config('hnsw.ef_search', $1, true)";
const ON_INDEX_TX = ['BEGIN', SET_EF, ON_INDEX, 'COMMIT'];
const NAMES = new Map([
  [SUPERSEDE_EXACT_SQL, EXACT],
  [SUPERSEDE_KEY_INDEX_SQL, ON_INDEX],
]);

let db: TestPostgres;
let store: PostgresMemoryStore;
const others: PostgresMemoryStore[] = [];

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  pgRows<T>(db.url, text, params);
const randomVector = () => Float32Array.from({ length: DIMS }, () => Math.random() - 0.5);

/** `n` memories of `key` written and embedded through `store`, as the indexer does; their row ids. */
async function written(key: string, n: number, namespace = 'default'): Promise<number[]> {
  for (let i = 0; i < n; i++) {
    const content = `${key} ${namespace} written ${i} ${Math.random()}`;
    await store.write(key, plainWrite(content, { namespace }), 100_000, Date.now());
  }
  const pending = await store.pendingEmbeddings(n + 1, 0);
  assert.equal(pending.length, n, 'only these memories wait for a vector');
  await store.storeEmbeddings(
    pending.map((row) => ({ rowId: row.rowId, contentHash: row.contentHash, vector: randomVector() })),
  );
  return pending.map((row) => row.rowId);
}

/** What `work` sent to the server, statement by statement. */
async function sentBy(work: () => Promise<unknown>): Promise<string[]> {
  const capture = captureStatements(db.database);
  try {
    await work();
  } finally {
    capture.stop();
  }
  return capture.sent.map(({ text }) => NAMES.get(text) ?? text.replace(/\s+/g, ' ').slice(0, 90));
}

async function validIndexes(): Promise<string[]> {
  const rows = await sql<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'memory_vectors'::regclass AND i.indisvalid AND c.relname LIKE 'memory\\_vectors\\_hnsw\\_k%'`,
  );
  return rows.map((row) => row.name).sort();
}

async function pgvectorDefaultEf(): Promise<string> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("SELECT '[1]'::vector");
    return String((await client.query("SELECT current_setting('hnsw.ef_search') AS ef")).rows[0].ef);
  } finally {
    await client.end();
  }
}

const otherStore = (recheckMs?: number) => {
  const other = new PostgresMemoryStore(db.url, {
    max: 2,
    keyIndexMinVectors: THRESHOLD,
    ...(recheckMs === undefined ? {} : { keyIndexRecheckMs: recheckMs }),
  });
  others.push(other);
  return other;
};

before(async () => {
  db = await createTestDatabase();
  // One connection: every statement of the store's, and every probe, goes over the same one.
  // Its catalogue read is once a run: the statement lists below must not meet a recheck
  // however slowly the machine gets there.
  store = new PostgresMemoryStore(db.url, {
    max: 1,
    keyIndexMinVectors: THRESHOLD,
    keyIndexRecheckMs: 600_000,
  });
  assert.equal(await store.adoptEmbeddingModel(MODEL), true);
  await seedKeyRows(db.url, CROWD, 1200, DIMS);
  await seedKeyRows(db.url, BIG, 300, DIMS);
  await seedKeyRows(db.url, SHARED, 300, DIMS);
});
after(async () => {
  for (const other of others) await other.close();
  await store?.close();
  await db?.close();
});

test('a batch of keys without their own index sends its statements and nothing else', async () => {
  // The store's first batch learns that the vector table is there and reads the catalogue.
  await store.supersedeSimilar(await written(PLAIN, 2), MIN_SIMILARITY);
  const rows = await written(PLAIN, 3);
  // And a row whose vector another process wrote: with no key indexed, its key is not needed.
  const [seeded] = await sql<{ id: string }>('SELECT id FROM memories WHERE api_key_id = $1 LIMIT 1', [
    CROWD,
  ]);
  const sent = await sentBy(() => store.supersedeSimilar([Number(seeded!.id), ...rows], MIN_SIMILARITY));
  assert.deepEqual(sent, [EXACT, EXACT, EXACT, EXACT]);
});

test("beside another key's index, a key without one still sends its statements alone", async () => {
  assert.equal(await store.keyIndexes.ensure(BIG), 'built');
  assert.deepEqual(await validIndexes(), [keyIndexName(BIG)]);
  const big = await written(BIG, 2, 'kept');
  const plain = await written(PLAIN, 2);
  const sent = await sentBy(() => store.supersedeSimilar([...big, ...plain], MIN_SIMILARITY));
  // The row ids of BIG come first (written first); each of its rows is scanned on its index.
  assert.deepEqual(sent, [...ON_INDEX_TX, ...ON_INDEX_TX, EXACT, EXACT]);
});

test('a row whose vector another process wrote costs one key lookup for the batch, once any key is indexed', async () => {
  const [seeded] = await sql<{ id: string }>('SELECT id FROM memories WHERE api_key_id = $1 LIMIT 1', [BIG]);
  const plain = await written(PLAIN, 1);
  const sent = await sentBy(() => store.supersedeSimilar([Number(seeded!.id), ...plain], MIN_SIMILARITY));
  assert.match(sent[0]!, /^SELECT id, api_key_id FROM memories WHERE id = ANY/);
  assert.deepEqual(sent.slice(1), [...ON_INDEX_TX, EXACT]);
});

test("the neighbour scan on a key's own index runs with hnsw.ef_search 80, for its transaction only", async () => {
  const big = await written(BIG, 1, 'kept');
  const plain = await written(PLAIN, 1);
  const capture: StatementCapture = captureStatements(db.database, {
    // Read on the statement's own connection, inside its transaction, just before it.
    before: (text) => text === SUPERSEDE_KEY_INDEX_SQL || text === SUPERSEDE_EXACT_SQL,
    sql: "SELECT current_setting('hnsw.ef_search') AS ef, pg_backend_pid() AS pid",
  });
  try {
    await store.supersedeSimilar([...big, ...plain], MIN_SIMILARITY);
  } finally {
    capture.stop();
  }
  // pgvector's default, as a connection of the test's sees it once the library is loaded.
  const session = await pgvectorDefaultEf();
  assert.notEqual(session, '80');
  const [onIndex, exact] = capture.probed;
  assert.equal(onIndex?.ef, '80', 'the scan of the key index did not run with ef_search 80');
  // The next statement, on the same connection after the COMMIT, is back on the session value.
  assert.equal(exact?.pid, onIndex?.pid);
  assert.equal(exact?.ef, session, 'the ef_search outlived its transaction');
});

test("another gateway's build is used after its recheck, or at once when a search finds it; a drop fails nothing", async () => {
  const rechecking = otherStore(300);
  const searching = otherStore(600_000);
  const [seeded] = await sql<{ id: string }>('SELECT id FROM memories WHERE api_key_id = $1 LIMIT 1', [
    SHARED,
  ]);
  const row = Number(seeded!.id);
  // Both read the catalogue before the build, and see BIG's index only.
  for (const other of [rechecking, searching]) await other.supersedeSimilar([row], MIN_SIMILARITY);
  assert.equal(await store.keyIndexes.ensure(SHARED), 'built');

  await searching.search(
    SHARED,
    { words: [], stems: [], vector: randomVector(), mode: 'vector', fetch: 40, filter: {} },
    Date.now(),
  );
  await searching.keyIndexes.idle();
  assert.ok((await sentBy(() => searching.supersedeSimilar([row], MIN_SIMILARITY))).includes(ON_INDEX));

  await new Promise((resolve) => setTimeout(resolve, 400)); // past the 300 ms recheck
  assert.ok((await sentBy(() => rechecking.supersedeSimilar([row], MIN_SIMILARITY))).includes(ON_INDEX));

  // This gateway erases the key's older memories (under half the threshold left): it drops the index.
  const kept = await written(SHARED, 2, 'kept');
  await store.deleteMany(
    SHARED,
    { filter: { namespace: 'default' } },
    { dryRun: false, includePinned: true },
    Date.now(),
  );
  await store.keyIndexes.idle();
  assert.deepEqual(await validIndexes(), [keyIndexName(BIG)]);
  assert.deepEqual(await sentBy(() => store.supersedeSimilar([kept[0]!], MIN_SIMILARITY)), [EXACT]);
  // The other gateway still counts on the index: its statement runs without it, and answers.
  const stale = await sentBy(() => searching.supersedeSimilar([kept[1]!], MIN_SIMILARITY));
  assert.ok(stale.includes(ON_INDEX), stale.join('\n'));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const fresh = await sentBy(() => rechecking.supersedeSimilar([kept[1]!], MIN_SIMILARITY));
  assert.ok(!fresh.includes(ON_INDEX) && fresh.includes(EXACT), fresh.join('\n'));
});
