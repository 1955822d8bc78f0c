/**
 * The SQLite store's document counts for keyword relevance are kept between searches and
 * follow every write to the file: the store's own, and another connection's (a second store
 * on the same file, as a listener thread, another process or the CLI has).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { freshKey, MAX, searchOf, t0 } from './store-suite-helpers.ts';

let dir: string;
let store: SqliteMemoryStore;
let other: SqliteMemoryStore;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memory-df-'));
  store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
  other = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
});
after(async () => {
  await store.close();
  await other.close();
  await rm(dir, { recursive: true, force: true });
});

/** The document count the store's search reports for `word`'s stem in the key. */
async function countOf(on: SqliteMemoryStore, key: string, word: string): Promise<number> {
  const { request } = searchOf(word, { mode: 'keyword' });
  const found = await on.search(key, request, t0);
  return found.documentFrequency[request.stems[0]!]!;
}

test('a write by the store itself is counted by its next search', async () => {
  const key = freshKey();
  await store.write(key, plainWrite('the lighthouse keeper rows out at dawn'), MAX, t0);
  assert.equal(await countOf(store, key, 'lighthouse'), 1);
  assert.equal(await countOf(store, key, 'lighthouse'), 1, 'asked twice, the same count');
  await store.write(key, plainWrite('a second lighthouse stands on the cape'), MAX, t0);
  assert.equal(await countOf(store, key, 'lighthouse'), 2);
});

test("another connection's write is counted by the next search", async () => {
  const key = freshKey();
  await store.write(key, plainWrite('the ferry leaves from the northern pier'), MAX, t0);
  assert.equal(await countOf(store, key, 'ferry'), 1);
  await other.write(key, plainWrite('the last ferry of the night is at ten'), MAX, t0);
  assert.equal(await countOf(store, key, 'ferry'), 2);
  await other.write(key, plainWrite('ferry tickets are sold on board'), MAX, t0);
  assert.equal(await countOf(store, key, 'ferry'), 3);
});

test('a term no memory holds counts 0, and 1 once a memory of another connection holds it', async () => {
  const key = freshKey();
  await store.write(key, plainWrite('orchards bloom in april'), MAX, t0);
  assert.equal(await countOf(store, key, 'quince'), 0);
  await other.write(key, plainWrite('the quince tree fruits late'), MAX, t0);
  assert.equal(await countOf(store, key, 'quince'), 1);
});
