/**
 * The memory namespace end to end: a real gateway, the official MCP SDK client over HTTP,
 * SQLite in a temporary DATA_DIR, and embeddings from a loopback OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { elapse, waitFor } from '../../support/harness.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../../support/openai-embeddings.ts';

let gw: TestGateway;
let embeddings: EmbeddingsServer;
let alice: Client;
let bob: Client;
const CAP = 6;

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'memory-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field below
type Json = Record<string, any>;

async function ok(client: Client, name: string, args: Json = {}): Promise<Json> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Json;
}

async function fails(client: Client, name: string, args: Json): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.structuredContent)}`);
  return (result.content as { text: string }[])[0]!.text;
}

before(async () => {
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
  gw = await startTestGateway({
    env: {
      ...contractEmbeddingsEnv(embeddings),
      MEMORY_MAX_PER_KEY: String(CAP),
      MEMORY_EMBED_RETRY_MS: '200',
      MEMORY_MIN_SCORE: '0.2',
    },
  });
  const second = gw.withStore((store) => store.create('second', 'test-suite'));
  alice = await connect(gw.apiKey);
  bob = await connect(second.key);
});

after(async () => {
  await alice?.close();
  await bob?.close();
  await gw?.close();
  await embeddings?.close();
});

describe('memory namespace over MCP', () => {
  test('lists the nine tools and memory_capabilities; origin-shaped calls validate', async () => {
    const { tools } = await alice.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'memory_capabilities',
      'memory_delete',
      'memory_delete_many',
      'memory_export',
      'memory_get',
      'memory_list',
      'memory_search',
      'memory_stats',
      'memory_update',
      'memory_write',
    ]);
    const written = await ok(alice, 'memory_write', {
      content: 'Origin style note about the staging cluster',
      tags: ['origin'],
      metadata: { source: 'go' },
    });
    assert.equal(written.status, 'created');
    await ok(alice, 'memory_update', {
      id: written.id,
      content: 'Origin style note about the production cluster',
    });
    const hits = await ok(alice, 'memory_search', { query: 'production cluster', tags: ['origin'] });
    assert.equal(hits.hits[0].id, written.id);
    const listed = await ok(alice, 'memory_list', { tags: ['origin'], limit: 0 });
    assert.equal(listed.memories.length, 1);
    assert.deepEqual(await ok(alice, 'memory_delete', { id: written.id }), { id: written.id, deleted: true });
  });

  test('another key cannot read, change, delete, list, search, count or export a memory', async () => {
    const mine = await ok(alice, 'memory_write', {
      content: 'alice secret: the vault code is 9921',
      tags: ['vault'],
    });
    await waitFor(async () => (await ok(alice, 'memory_get', { id: mine.id })).embedding_status === 'ready', {
      what: "alice's memory to be embedded",
    });
    for (const [name, args] of [
      ['memory_get', { id: mine.id }],
      ['memory_update', { id: mine.id, pinned: true }],
      ['memory_delete', { id: mine.id }],
    ] as const) {
      assert.equal(await fails(bob, name, args), 'memory not found');
    }
    const search = await ok(bob, 'memory_search', { query: 'vault code 9921' });
    assert.equal(search.hits.length, 0);
    assert.equal(search.total_memories, 0);
    assert.match(search.note, /holds no memories/);
    assert.equal((await ok(bob, 'memory_list', { tags: ['vault'] })).memories.length, 0);
    assert.equal((await ok(bob, 'memory_stats')).count, 0);
    assert.equal((await ok(bob, 'memory_export')).memories.length, 0);
    const bulk = await ok(bob, 'memory_delete_many', { ids: [mine.id], dry_run: false });
    assert.equal(bulk.matched, 0);
    const everything = await ok(bob, 'memory_delete_many', {
      filter: { all: true },
      dry_run: false,
      include_pinned: true,
    });
    assert.equal(everything.deleted, 0);
    assert.equal((await ok(alice, 'memory_get', { id: mine.id })).content, mine.content);
    const found = await ok(alice, 'memory_search', { query: 'vault code 9921' });
    assert.equal(found.hits[0].id, mine.id);
    assert.equal(found.hits[0].source, 'both');
    await ok(alice, 'memory_delete', { id: mine.id });
  });

  test('upsert by key, exact dedup, and delete_many with a dry run first', async () => {
    const first = await ok(alice, 'memory_write', {
      content: 'Preferred editor: vim',
      key: 'editor',
      namespace: 'prefs',
    });
    const second = await ok(alice, 'memory_write', {
      content: 'Preferred editor: helix',
      key: 'editor',
      namespace: 'prefs',
    });
    assert.equal(second.status, 'updated');
    assert.equal(second.id, first.id);
    assert.equal(second.embedding_status, 'pending');
    const twin = await ok(alice, 'memory_write', {
      content: ' Preferred editor: helix ',
      namespace: 'prefs',
      tags: ['x'],
    });
    assert.equal(twin.status, 'unchanged');
    assert.equal(twin.id, first.id);
    const dry = await ok(alice, 'memory_delete_many', { filter: { namespace: 'prefs' } });
    assert.deepEqual([dry.dry_run, dry.matched, dry.deleted], [true, 1, 0]);
    const real = await ok(alice, 'memory_delete_many', { filter: { namespace: 'prefs' }, dry_run: false });
    assert.deepEqual([real.matched, real.deleted, real.ids], [1, 1, [first.id]]);
  });

  test('TTL hides a memory once it expires', async () => {
    const temp = await ok(alice, 'memory_write', { content: 'temporary parking spot B7', ttl_seconds: 60 });
    assert.ok(Date.parse(temp.expires_at) > Date.now());
    const past = await fails(alice, 'memory_update', { id: temp.id, expires_at: '2020-01-01T00:00:00Z' });
    assert.equal(past, 'expires_at must be in the future');
    // Move the expiry to just ahead (far enough that a slow call still arrives before it),
    // then wait it out: elapsed time is the point, the memory's expiry must pass.
    const soon = await ok(alice, 'memory_update', {
      id: temp.id,
      expires_at: new Date(Date.now() + 2000).toISOString(),
    });
    await elapse(Math.max(0, Date.parse(soon.expires_at) - Date.now()) + 100);
    assert.equal(await fails(alice, 'memory_get', { id: temp.id }), 'memory not found');
    assert.equal(
      (await ok(alice, 'memory_search', { query: 'parking spot B7', mode: 'keyword' })).hits.length,
      0,
    );
  });

  test('the cap evicts the oldest unpinned memories, reports them, and spares pinned ones', async () => {
    await ok(alice, 'memory_delete_many', { filter: { all: true }, dry_run: false, include_pinned: true });
    const pinned = await ok(alice, 'memory_write', {
      content: 'never forget: allergy to penicillin',
      pinned: true,
    });
    const ids: string[] = [];
    for (let i = 0; i < CAP - 1; i++)
      ids.push((await ok(alice, 'memory_write', { content: `fact number ${i}` })).id);
    const overflow = await ok(alice, 'memory_write', { content: 'one fact too many' });
    assert.deepEqual(overflow.evicted_ids, [ids[0]]);
    assert.equal(await fails(alice, 'memory_get', { id: ids[0]! }), 'memory not found');
    assert.equal((await ok(alice, 'memory_get', { id: pinned.id })).pinned, true);
    const stats = await ok(alice, 'memory_stats');
    assert.equal(stats.count, CAP);
    assert.equal(stats.max_per_key, CAP);
    // Bob's memories are untouched by Alice's cap.
    for (const id of [...ids.slice(1), overflow.id]) await ok(alice, 'memory_update', { id, pinned: true });
    assert.equal(
      await fails(alice, 'memory_write', { content: 'no room left' }),
      `memory limit reached (${CAP}); delete or unpin memories first`,
    );
    await ok(alice, 'memory_delete_many', { filter: { all: true }, dry_run: false, include_pinned: true });
  });

  test('search keeps answering keyword-only, flagged degraded, while the embedder is down', async () => {
    const stored = await ok(alice, 'memory_write', {
      content: 'the incident runbook lives in docs/runbook.md',
    });
    await waitFor(
      async () => (await ok(alice, 'memory_get', { id: stored.id })).embedding_status === 'ready',
      {
        what: 'the runbook memory to be embedded',
      },
    );
    embeddings.failWith = 503;
    try {
      const during = await ok(alice, 'memory_write', {
        content: 'outage-time note about the pager rotation',
      });
      const hits = await ok(alice, 'memory_search', { query: 'pager rotation runbook' });
      assert.match(hits.degraded, /^semantic search unavailable: .*503.*; keyword results only$/);
      assert.deepEqual(new Set(hits.hits.map((h: Json) => h.id)), new Set([stored.id, during.id]));
      assert.ok(hits.hits.every((h: Json) => h.source === 'keyword' && h.score === null));
      assert.match(
        await fails(alice, 'memory_search', { query: 'pager', mode: 'vector' }),
        /^semantic search unavailable/,
      );
      assert.equal((await ok(alice, 'memory_get', { id: during.id })).embedding_status, 'pending');
      embeddings.failWith = null;
      // The background indexer retries and the memory becomes vector-searchable.
      await waitFor(
        async () => (await ok(alice, 'memory_get', { id: during.id })).embedding_status === 'ready',
        {
          what: 'the indexer to embed the outage-time memory once the embedder is back',
        },
      );
      const after = await ok(alice, 'memory_search', { query: 'different words pager rotation' });
      assert.equal(after.degraded, undefined);
    } finally {
      embeddings.failWith = null;
    }
  });

  test('bad input gets an error naming the field, and nothing is stored', async () => {
    const before = (await ok(alice, 'memory_stats')).count;
    assert.match(
      await fails(alice, 'memory_write', {}),
      /expected string, received undefined\n {2}→ at content/,
    );
    assert.match(await fails(alice, 'memory_write', { content: '   ' }), /content is required/);
    assert.match(await fails(alice, 'memory_write', { content: 'x'.repeat(8001) }), /<=8000 characters/);
    assert.match(await fails(alice, 'memory_write', { content: 'a', tags: ['bad tag!'] }), /→ at tags\[0\]/);
    assert.match(
      await fails(alice, 'memory_write', { content: 'a', owner: 'bob' }),
      /Unrecognized key: "owner"/,
    );
    assert.match(await fails(alice, 'memory_get', { id: 'not-a-uuid' }), /Invalid UUID\n {2}→ at id/);
    assert.match(
      await fails(alice, 'memory_write', { content: 'a', expires_at: 'tomorrow' }),
      /→ at expires_at/,
    );
    assert.match(
      await fails(alice, 'memory_write', {
        content: 'a',
        ttl_seconds: 120,
        expires_at: '2999-01-01T00:00:00Z',
      }),
      /not both/,
    );
    assert.match(
      await fails(alice, 'memory_update', { id: crypto.randomUUID() }),
      /give at least one field to change/,
    );
    assert.match(await fails(alice, 'memory_delete_many', { filter: {} }), /at least one condition/);
    assert.match(await fails(alice, 'memory_list', { cursor: 'garbage' }), /cursor is not valid/);
    assert.equal((await ok(alice, 'memory_stats')).count, before);
  });

  test('supersedes naming no memory of the key is refused by id, and nothing is stored or marked', async () => {
    const mine = await ok(alice, 'memory_write', { content: 'standup is at 9:30' });
    const [aliceBefore, bobBefore] = [
      (await ok(alice, 'memory_stats')).count,
      (await ok(bob, 'memory_stats')).count,
    ];
    const unknown = crypto.randomUUID();
    assert.equal(
      await fails(alice, 'memory_write', { content: 'standup moved to 10:00', supersedes: unknown }),
      `supersedes: no memory ${unknown} in this key; pass the id of an existing memory (memory_search or memory_list show ids)`,
    );
    // Another key's memory is as unknown as a made-up id.
    assert.match(
      await fails(bob, 'memory_write', { content: 'standup at 10', supersedes: mine.id }),
      new RegExp(mine.id),
    );
    assert.equal((await ok(alice, 'memory_stats')).count, aliceBefore);
    assert.equal((await ok(bob, 'memory_stats')).count, bobBefore);
    assert.equal((await ok(alice, 'memory_get', { id: mine.id })).superseded_by, null);
    await ok(alice, 'memory_delete', { id: mine.id });
  });

  test('list pages with cursors and export returns full content; stats reports the model', async () => {
    const long = `long memory ${'z'.repeat(500)}`;
    const written = await ok(alice, 'memory_write', { content: long, namespace: 'pages' });
    for (let i = 0; i < 3; i++)
      await ok(alice, 'memory_write', { content: `page item ${i}`, namespace: 'pages' });
    const first = await ok(alice, 'memory_list', { namespace: 'pages', limit: 2 });
    const second = await ok(alice, 'memory_list', {
      namespace: 'pages',
      limit: 2,
      cursor: first.next_cursor,
    });
    assert.equal(second.next_cursor, null);
    const listed = [...first.memories, ...second.memories];
    assert.equal(listed.length, 4);
    const snippet = listed.find((m: Json) => m.id === written.id);
    assert.equal(snippet.content_truncated, true);
    assert.equal(Array.from(snippet.content as string).length, 321);
    const exported = await ok(alice, 'memory_export', { namespace: 'pages' });
    assert.equal(exported.memories.find((m: Json) => m.id === written.id).content, long);
    const stats = await ok(alice, 'memory_stats');
    assert.equal(stats.store, 'sqlite');
    assert.equal(stats.embedding.provider, 'openai');
    assert.equal(stats.embedding.dimensions, 64);
    assert.equal(stats.embedding.min_score_default, 0.2);
    assert.ok(!JSON.stringify(stats).includes('sk-test-secret'));
  });
});

test('memories persist across a gateway restart on the same data dir', async () => {
  const dataDir = gw.dataDir;
  const kept = await ok(alice, 'memory_write', { content: 'survives restarts', namespace: 'persist' });
  const again = await startTestGateway({ dataDir, env: { MEMORY_EMBEDDINGS: 'none' } });
  try {
    const client = new Client({ name: 'memory-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${again.url}/memory/mcp`), {
        requestInit: { headers: { 'X-API-Key': gw.apiKey } },
      }),
    );
    assert.equal((await ok(client, 'memory_get', { id: kept.id })).content, 'survives restarts');
    const search = await ok(client, 'memory_search', { query: 'survives restarts' });
    assert.equal(search.hits[0].id, kept.id);
    // With embeddings off, keyword is the default mode, not a degradation; asking for hybrid says why.
    assert.deepEqual([search.mode, search.degraded], ['keyword', undefined]);
    const hybrid = await ok(client, 'memory_search', { query: 'survives restarts', mode: 'hybrid' });
    assert.match(hybrid.degraded, /MEMORY_EMBEDDINGS=none/);
    await client.close();
  } finally {
    await again.close();
  }
});
