/**
 * The question the cross-key audit left open (docs/decisions.md, "Memory between API keys"):
 * can other keys' nearer vectors crowd a key's own out of Postgres' HNSW scan? On PGlite a
 * tiny table was scanned exactly, so a test could not tell; on the native server it can.
 * One key's 2,000 vectors sit right around the query, another key's 2,000 anywhere. Without
 * iterative scans the index hands back its ef_search (40) nearest, all the first key's, and
 * the second key gets none of its own; with the store's `hnsw.iterative_scan = strict_order`
 * (pgvector >= 0.8.0, decision 0503) it gets a full page.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { LOCAL_MODEL } from '../../../gateway/namespaces/memory/embeddings/types.ts';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';

const PER_KEY = 2000;
const FETCH = 40;

let db: TestPostgres;
let store: PostgresMemoryStore;
let query: Float32Array;

before(async () => {
  db = await createTestDatabase();
  store = new PostgresMemoryStore(db.url, { max: 2 });
  assert.equal(await store.adoptEmbeddingModel(LOCAL_MODEL), true);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    // Made by the server: thousands of 512-d literals through the driver would be most of the test.
    await client.query(
      `CREATE TEMP TABLE q AS SELECT array_agg(random()::float4 - 0.5 ORDER BY i) AS a FROM generate_series(1, ${LOCAL_MODEL.dimensions}) i`,
    );
    await client.query(
      `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status, created_at, updated_at, occurred_at)
       SELECT gen_random_uuid(), k, 'default', k || ' note ' || g, md5(k || g), 'ready', 1, 1, 1
         FROM generate_series(1, ${PER_KEY}) g, (VALUES ('crowd'), ('mine')) t(k)`,
    );
    await client.query(
      `INSERT INTO memory_vectors (memory_id, api_key_id, embedding)
       SELECT m.id, m.api_key_id, (
         SELECT array_agg(CASE WHEN m.api_key_id = 'crowd' THEN q.a[i] + (random()::float4 - 0.5) * 0.02
                               ELSE random()::float4 - 0.5 END ORDER BY i)
           FROM generate_series(1, ${LOCAL_MODEL.dimensions}) i)::vector
         FROM memories m, q`,
    );
    await client.query('ANALYZE memories; ANALYZE memory_vectors');
    const { rows } = await client.query('SELECT a FROM q');
    query = Float32Array.from(rows[0].a as number[]);
  } finally {
    await client.end();
  }
});
after(async () => {
  await store?.close();
  await db?.close();
});

/** The vector arm's own statement shape, on a connection with iterative scans off. */
async function withoutIterativeScan(): Promise<{ found: number; plan: string }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('SET hnsw.iterative_scan = off');
    const sql = `SELECT v.memory_id FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
                  WHERE v.api_key_id = 'mine' ORDER BY v.embedding <=> $1::vector LIMIT ${FETCH}`;
    const literal = `[${Array.from(query).join(',')}]`;
    const plan = (await client.query(`EXPLAIN ${sql}`, [literal])).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    return { found: (await client.query(sql, [literal])).rowCount ?? 0, plan };
  } finally {
    await client.end();
  }
}

test("another key's nearer vectors do not crowd a key's own out of the HNSW scan", async () => {
  const control = await withoutIterativeScan();
  // The set-up must really crowd: the index is used and, without iterative scans, it finds
  // fewer of this key's rows than asked (else this test would prove nothing).
  assert.match(control.plan, /memory_vectors_hnsw/, control.plan);
  assert.ok(control.found < FETCH, `without iterative scans the key still got ${control.found}`);

  const found = await store.search(
    'mine',
    { words: [], stems: [], vector: query, mode: 'vector', fetch: FETCH, filter: {} },
    Date.now(),
  );
  const ranked = found.candidates.filter((c) => c.vectorRank !== null);
  assert.equal(ranked.length, FETCH, `the store's search found ${ranked.length} of the key's own`);
  assert.ok(ranked.every((c) => c.memory.content.startsWith('mine ')));
  console.log(`without iterative scans: ${control.found} of ${FETCH}; the store: ${ranked.length}`);
});
