/**
 * The in-memory copy of each key's sign bits stays exact while other connections to the
 * same file (other listener threads or gateway processes) write, delete, re-embed and
 * reset: a long-lived store that has searched before answers exactly like a store opened
 * afterwards, which starts from the file alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { contentHash, plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { SqliteBitIndex } from '../../../gateway/namespaces/memory/store/sqlite-bit-index.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { queryWords } from '../../../gateway/namespaces/memory/store/text.ts';
import type { SearchCandidates, SearchRequest } from '../../../gateway/namespaces/memory/store/types.ts';
import { openSqlite } from '../../../gateway/store/index.ts';

const DIMS = 64;
const MODEL = { model: 'test-random', dimensions: DIMS };
const MAX = 1_000_000;

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const random = seeded(7);
function randomUnit(): Float32Array {
  const v = Float32Array.from({ length: DIMS }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function vectorSearch(vector: Float32Array): SearchRequest {
  return {
    ...queryWords('unused'),
    vector,
    mode: 'vector',
    fetch: 10,
    filter: {},
  };
}

/** The vector arm's answer in its own order. */
function byVectorRank(found: SearchCandidates): string[] {
  return found.candidates
    .toSorted((a, b) => a.vectorRank! - b.vectorRank!)
    .map((candidate) => candidate.memory.id);
}

describe('sign-bit cache shared by connections to one SQLite file', () => {
  let dir: string;
  let file: string;
  let reader: SqliteMemoryStore;
  let writer: SqliteMemoryStore;
  const vectors = new Map<string, Float32Array>();
  const keys = ['alpha', 'beta'];

  /** Writes `count` memories for `key` through the writer and stores their vectors. */
  async function add(key: string, count: number, vector = randomUnit): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const content = `${key} memory ${vectors.size}`;
      const v = vector();
      vectors.set(content, v);
      const { memory } = await writer.write(key, plainWrite(content), MAX, Date.now());
      ids.push(memory.id);
    }
    for (const row of await writer.pendingEmbeddings(100_000, 0)) {
      await writer.setEmbedding(row.rowId, row.contentHash, vectors.get(row.content)!);
    }
    return ids;
  }

  /** The reader's answer, checked against a store that opens the file only now. */
  async function agreed(key: string, query: Float32Array): Promise<string[]> {
    const fresh = new SqliteMemoryStore(file);
    try {
      const expected = byVectorRank(await fresh.search(key, vectorSearch(query), Date.now()));
      const got = byVectorRank(await reader.search(key, vectorSearch(query), Date.now()));
      assert.deepEqual(got, expected);
      return got;
    } finally {
      await fresh.close();
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'memory-bits-'));
    file = join(dir, 'memory.sqlite');
    writer = new SqliteMemoryStore(file);
    await writer.adoptEmbeddingModel(MODEL);
    // A budget of one byte: the reader keeps only the key it searched last.
    reader = new SqliteMemoryStore(file, { vectorCacheBytes: 1 });
    for (const key of keys) await add(key, 600);
  });
  after(async () => {
    await reader.close();
    await writer.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('finds what another connection writes after the reader cached the key', async () => {
    const query = randomUnit();
    await agreed('alpha', query);
    const [twin] = await add('alpha', 1, () => query);
    await add('alpha', 40);
    const got = await agreed('alpha', query);
    assert.equal(got[0], twin);
  });

  it('drops a few deleted memories at once, and many by reloading the key', async () => {
    const query = randomUnit();
    const [twin] = await add('alpha', 1, () => query);
    assert.equal((await agreed('alpha', query))[0], twin);
    assert.equal(await writer.delete('alpha', twin!, Date.now()), true);
    assert.ok(!(await agreed('alpha', query)).includes(twin!));
    // More deletions than the cache checks one by one.
    const gone = (await writer.list('alpha', {}, { limit: 300 }, Date.now())).memories;
    assert.equal(gone.length, 300);
    for (const memory of gone) await writer.delete('alpha', memory.id, Date.now());
    const after = await agreed('alpha', query);
    for (const memory of gone) assert.ok(!after.includes(memory.id));
  });

  it('follows a memory whose content changed and was embedded again', async () => {
    const query = randomUnit();
    const [id] = await add('alpha', 1);
    await agreed('alpha', query);
    const changed = 'alpha memory rewritten';
    vectors.set(changed, query);
    await writer.update('alpha', id!, { content: { text: changed, hash: contentHash(changed) } }, Date.now());
    assert.ok(!(await agreed('alpha', query)).includes(id!), 'the stale vector is gone');
    for (const row of await writer.pendingEmbeddings(100_000, 0)) {
      await writer.setEmbedding(row.rowId, row.contentHash, vectors.get(row.content)!);
    }
    assert.equal((await agreed('alpha', query))[0], id);
  });

  it('keeps each key to its own memories when the budget evicts keys between searches', async () => {
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        const got = await agreed(key, randomUnit());
        assert.equal(got.length, 10);
        for (const id of got)
          assert.ok((await writer.get(key, id, Date.now())) !== null, `${id} is ${key}'s`);
      }
    }
  });

  it('sees a re-embed reset by another connection, then the new vectors', async () => {
    const query = randomUnit();
    assert.equal((await agreed('beta', query)).length, 10);
    await writer.resetEmbeddings(MODEL);
    assert.deepEqual(await agreed('beta', query), []);
    const [twin] = await add('beta', 1, () => query);
    assert.equal((await agreed('beta', query))[0], twin);
  });
});

describe('sign-bit candidates under random changes from another connection', () => {
  it('are always exactly the k nearest live rows of the key, whatever was written or deleted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memory-bits-random-'));
    const file = join(dir, 'memory.sqlite');
    // The store creates the schema and the vector tables; the test then drives the tables.
    const store = new SqliteMemoryStore(file);
    await store.adoptEmbeddingModel({ model: 'test-bits', dimensions: 64 });
    await store.close();
    const other = openSqlite(file);
    const mine = openSqlite(file);
    try {
      const statements = new Map<string, ReturnType<typeof mine.prepare>>();
      const st = (sql: string) => {
        if (!statements.has(sql)) statements.set(sql, mine.prepare(sql));
        return statements.get(sql)!;
      };
      const index = new SqliteBitIndex(mine, st as never, 1 << 30);
      const bytes = () => Buffer.from(Array.from({ length: 8 }, () => Math.floor(random() * 256)));
      const put = other.prepare('INSERT INTO memories_bits (memory_id, api_key_id, bits) VALUES (?, ?, ?)');
      const drop = other.prepare('DELETE FROM memories_bits WHERE memory_id = ?');
      const live = (key: string) =>
        other.prepare('SELECT memory_id AS id, bits FROM memories_bits WHERE api_key_id = ?').all(key) as {
          id: number;
          bits: Buffer;
        }[];
      const distance = (a: Buffer, b: Buffer) => {
        let d = 0;
        for (let i = 0; i < a.length; i++) for (let x = a[i]! ^ b[i]!; x; x >>= 1) d += x & 1;
        return d;
      };
      let next = 1;
      for (let step = 0; step < 60; step++) {
        const op = step % 4;
        const rows = live('k1');
        if (op === 0 || rows.length < 50) {
          const add = other.transaction(() => {
            // Another key's rows interleave with this key's in the same table.
            for (let i = 0; i < 40; i++) put.run(next++, i % 3 === 0 ? 'k2' : 'k1', bytes());
          });
          add();
        } else if (op === 1) {
          // A few deletions (checked candidate by candidate) or many (a reload).
          const count = step % 8 === 1 ? 3 : 280;
          for (const row of rows.slice(0, count)) drop.run(row.id);
        } else if (op === 2) {
          // A re-embed: the same memory id comes back under a new seq with new bits.
          for (const row of rows.slice(0, 5)) {
            drop.run(row.id);
            put.run(row.id, 'k1', bytes());
          }
        }
        const query = bytes();
        const k = 1 + (step % 5) * 30;
        const got = index.candidates('k1', query, k);
        const current = new Map(live('k1').map((row) => [row.id, distance(row.bits, query)]));
        const nearest = [...current.values()].sort((a, b) => a - b).slice(0, k);
        assert.equal(new Set(got).size, got.length, `step ${step}: no id twice`);
        for (const id of got) assert.ok(current.has(id), `step ${step}: ${id} is a live row of k1`);
        assert.deepEqual(
          got.map((id) => current.get(id)!),
          nearest,
          `step ${step}: distances of the ${k} nearest`,
        );
      }
    } finally {
      mine.close();
      other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
