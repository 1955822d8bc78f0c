/**
 * Memory never crosses API keys, through a real gateway over HTTP on each store (SQLite, and
 * Postgres on the run's native server): not through the shared
 * query-embedding cache, not through the numbers a cursor carries, and not after a key is
 * revoked. memory-tools.test.ts covers the tools' direct refusals; this file covers what
 * a key could learn around them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StateStore } from '../../../gateway/accounts/model.ts';
import { openStateStore } from '../../../gateway/accounts/open.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../../support/openai-embeddings.ts';
import { isolationStores, type Json, memoryCalls, mint as mintKey, rowIdsIn } from './isolation-support.ts';

const stores = isolationStores('mcp-memory-isolation-');

for (const [kind, storeEnv] of Object.entries(stores)) {
  describe(`memory keys stay apart on ${kind}`, () => {
    let gw: TestGateway;
    let embeddings: EmbeddingsServer;
    let state: StateStore;

    const { call, ok, fails } = memoryCalls(() => gw.url);
    const mint = (label: string) => mintKey(state, label);

    const rowIds = (publicIds: string[]) => rowIdsIn(storeEnv(), publicIds);

    /** Every number a cursor shows to whoever base64-decodes it. */
    function numbersIn(cursor: string): number[] {
      try {
        const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
        return Array.isArray(parts) ? parts.filter((p): p is number => typeof p === 'number') : [];
      } catch {
        return [];
      }
    }

    before(async () => {
      embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
      gw = await startTestGateway({
        dataDir: storeEnv().DATA_DIR,
        env: {
          ...storeEnv(),
          ...contractEmbeddingsEnv(embeddings),
          MEMORY_EMBED_RETRY_MS: '200',
          // A loaded machine (load average above 20) passed the 5 s default before the contract
          // server answered, and the first search read as degraded; the failures this file
          // causes are the server's 503s, which come at once.
          MEMORY_QUERY_EMBED_TIMEOUT_MS: '60000',
          API_KEY_CACHE_TTL_MS: '0',
        },
      });
      state = await openStateStore(storeEnv());
    });

    after(async () => {
      await state?.close();
      await gw?.close();
      await embeddings?.close();
    });

    test('a query another key asked is not answered from the query-embedding cache', async () => {
      const [alice, bob] = [await mint('alice-cache'), await mint('bob-cache')];
      await ok(alice.key, 'memory_write', { content: 'The acquisition of Northwind closes on 9 May.' });
      const question = 'when does the Northwind acquisition close?';
      const asked = await ok(alice.key, 'memory_search', { query: question });
      assert.equal(asked.degraded, undefined);
      embeddings.failWith = 503;
      try {
        // The embedder is down: a query bob never asked must run keyword-only, and so must
        // one only alice asked, or bob learns what alice searched for (and, with the write
        // decider on, what she wrote: its related() search embeds the new memory's text).
        const fresh = await ok(bob.key, 'memory_search', { query: 'a question nobody asked before' });
        assert.match(fresh.degraded, /semantic search unavailable/);
        const replayed = await ok(bob.key, 'memory_search', { query: question });
        assert.match(
          replayed.degraded ?? '',
          /semantic search unavailable/,
          "bob was served alice's cached query",
        );
        const vector = await fails(bob.key, 'memory_search', { query: question, mode: 'vector' });
        assert.equal(vector.code, 'SEMANTIC_UNAVAILABLE');
        // The key that asked still has its own answer cached: the cache works within a key.
        const again = await ok(alice.key, 'memory_search', { query: question });
        assert.equal(again.degraded, undefined);
        assert.match(again.hits[0].content, /Northwind/);
      } finally {
        embeddings.failWith = null;
      }
    });

    test('cursors carry no store-wide row numbers and are refused by another key', async () => {
      const [alice, bob] = [await mint('alice-cursor'), await mint('bob-cursor')];
      const mine: string[] = [];
      mine.push((await ok(alice.key, 'memory_write', { content: 'cursor note one', namespace: 'c' })).id);
      // Bob's writes between alice's would show as a gap in row numbers a cursor carried.
      for (let i = 0; i < 7; i++) await ok(bob.key, 'memory_write', { content: `bob cursor note ${i}` });
      mine.push((await ok(alice.key, 'memory_write', { content: 'cursor note two', namespace: 'c' })).id);
      mine.push((await ok(alice.key, 'memory_write', { content: 'cursor note three', namespace: 'c' })).id);
      const rows = await rowIds(mine);
      assert.equal(rows[1]! - rows[0]!, 8, 'the store numbered bob’s rows between alice’s');

      const cursors: string[] = [];
      const seen: string[] = [];
      for (const [tool, args] of [
        ['memory_list', { namespace: 'c', order: 'oldest' }],
        ['memory_list', { namespace: 'c', order: 'newest' }],
        ['memory_export', { namespace: 'c' }],
      ] as const) {
        let cursor: string | null = null;
        const ids: string[] = [];
        do {
          const page: Json = await ok(alice.key, tool, { ...args, limit: 1, ...(cursor ? { cursor } : {}) });
          ids.push(...page.memories.map((m: Json) => m.id));
          cursor = page.next_cursor;
          if (!cursor) break;
          cursors.push(cursor);
          const shown = numbersIn(cursor);
          for (const row of rows)
            assert.ok(!shown.includes(row), `${tool} cursor ${cursor} shows row ${row}`);
        } while (cursor);
        // Paging still walks every memory once, in order.
        assert.deepEqual(ids, args.order === 'newest' ? [...mine].reverse() : mine, `${tool} ${args.order}`);
        seen.push(...ids);
        // Another key holding alice's cursor is told it is not valid here, not shown a page.
        const stolen = await fails(bob.key, tool, { ...args, limit: 1, cursor: cursors.at(-1) });
        assert.equal(stolen.code, 'INVALID_CURSOR');
      }
      assert.equal(cursors.length, 6);
      assert.equal(seen.length, 9);
    });

    test('a revoked key is refused and its memories stay unseen by every other key, new ones included', async () => {
      const gone = await mint('revoked-owner');
      const written = await ok(gone.key, 'memory_write', {
        content: 'revoked key secret: the safe opens with 4417',
        tags: ['safe'],
        key: 'safe-code',
      });
      await waitFor(
        async () => (await ok(gone.key, 'memory_get', { id: written.id })).embedding_status === 'ready',
        // A loaded machine can hold the embedding back a while; nothing here depends on how long.
        { what: 'the memory to be embedded', timeoutMs: 60_000 },
      );
      assert.equal(await state.revokeKey(gone.id), true);
      await waitFor(async () => (await call(gone.key, 'memory_stats')).status === 401, {
        what: 'the revoked key to be refused',
      });
      for (const name of ['memory_get', 'memory_search', 'memory_export', 'memory_delete']) {
        assert.equal((await call(gone.key, name, { id: written.id, query: 'safe' })).status, 401, name);
      }
      const heir = await mint('revoked-owner');
      assert.notEqual(heir.id, gone.id);
      for (const [name, args] of [
        ['memory_get', { id: written.id }],
        ['memory_update', { id: written.id, pinned: true }],
        ['memory_delete', { id: written.id }],
      ] as const) {
        const refused = await fails(heir.key, name, args);
        assert.equal(refused.text, 'memory not found', name);
      }
      const search = await ok(heir.key, 'memory_search', { query: 'safe opens 4417', include_weak: true });
      assert.deepEqual(search.hits, []);
      assert.equal(search.total_memories, 0);
      assert.match(search.note, /holds no memories/);
      assert.equal((await ok(heir.key, 'memory_stats')).count, 0);
      assert.deepEqual((await ok(heir.key, 'memory_export')).memories, []);
      assert.deepEqual((await ok(heir.key, 'memory_list', { tags: ['safe'] })).memories, []);
      // The same upsert key and text in the new key make a new memory, never the old one.
      const own = await ok(heir.key, 'memory_write', {
        content: 'revoked key secret: the safe opens with 4417',
        tags: ['safe'],
        key: 'safe-code',
      });
      assert.equal(own.status, 'created');
      assert.notEqual(own.id, written.id);
      const dry = await ok(heir.key, 'memory_delete_many', { filter: { all: true }, include_pinned: true });
      assert.deepEqual(dry.ids, [own.id]);
      // The revoked key's memory is still stored, untouched by the other key's writes.
      const [left] = await rowIds([written.id]);
      assert.ok(left !== undefined);
    });
  });
}
