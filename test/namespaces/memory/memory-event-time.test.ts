/**
 * Event time (occurred_at) over MCP: a real gateway, the official SDK client, SQLite in a
 * temporary DATA_DIR and embeddings from a loopback OpenAI-compatible server. The store
 * suite checks the same rules on both stores; this checks the wire: validation, the field
 * in every answer, filters and list order. And what `npm run memory -- import` leaves
 * pending, the running gateway's indexer embeds (or the command itself, with --embed).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../../support/openai-embeddings.ts';
import { memoryCli, newKey, writeLines } from './transfer-support.ts';

let gw: TestGateway;
let embeddings: EmbeddingsServer;
let client: Client;

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field below
type Json = Record<string, any>;

async function ok(name: string, args: Json = {}): Promise<Json> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Json;
}

async function fails(name: string, args: Json): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.structuredContent)}`);
  return (result.content as { text: string }[])[0]!.text;
}

before(async () => {
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
  gw = await startTestGateway({
    env: { ...contractEmbeddingsEnv(embeddings), MEMORY_EMBED_RETRY_MS: '200' },
  });
  client = new Client({ name: 'memory-event-time-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': gw.apiKey } },
    }),
  );
});

after(async () => {
  await client?.close();
  await gw?.close();
  await embeddings?.close();
});

describe('memory event time over MCP', () => {
  test('occurred_at that is not ISO 8601 with an offset, or too far ahead, is refused naming the field', async () => {
    const before = (await ok('memory_stats')).count;
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    for (const bad of ['yesterday', '2026-03-01', '2026-03-01T10:00:00', future]) {
      const message = await fails('memory_write', { content: `dated ${bad}`, occurred_at: bad });
      assert.match(message, /→ at occurred_at/, bad);
    }
    assert.match(
      await fails('memory_write', { content: 'from the future', occurred_at: future }),
      /occurred_at is more than 5 minutes in the future/,
    );
    assert.equal((await ok('memory_stats')).count, before, 'nothing was stored');
    const id = (await ok('memory_write', { content: 'to be redated' })).id;
    assert.match(await fails('memory_update', { id, occurred_at: future }), /→ at occurred_at/);
    // Within the allowed skew is fine: the writer's clock may run a little ahead.
    const soon = new Date(Date.now() + 60_000).toISOString();
    assert.equal((await ok('memory_update', { id, occurred_at: soon })).occurred_at, soon);
  });

  test('occurred_at comes back in every answer, normalised to UTC; without it the write time is used', async () => {
    const written = await ok('memory_write', {
      content: 'signed the lease for the Lisbon office',
      occurred_at: '2025-03-14T09:30:00+02:00',
      tags: ['event-time'],
    });
    assert.equal(written.occurred_at, '2025-03-14T07:30:00.000Z');
    assert.notEqual(written.created_at, written.occurred_at);
    assert.equal((await ok('memory_get', { id: written.id })).occurred_at, '2025-03-14T07:30:00.000Z');
    const listed = await ok('memory_list', { tags: ['event-time'] });
    assert.equal(listed.memories[0].occurred_at, '2025-03-14T07:30:00.000Z');
    await waitFor(async () => (await ok('memory_get', { id: written.id })).embedding_status === 'ready', {
      what: 'the lease memory to be embedded',
    });
    const found = await ok('memory_search', { query: 'Lisbon office lease' });
    assert.equal(found.hits[0].id, written.id);
    assert.equal(found.hits[0].occurred_at, '2025-03-14T07:30:00.000Z');
    const plain = await ok('memory_write', { content: 'no event time given here' });
    assert.equal(plain.occurred_at, plain.created_at);
  });

  test('memory_list orders by occurred_at (ties in write order) and filters by occurred_after/before', async () => {
    const write = async (content: string, occurred_at: string) =>
      (await ok('memory_write', { content, occurred_at, namespace: 'timeline' })).id;
    await write('standup moved to 10:00', '2024-05-02T00:00:00Z');
    await write('kickoff meeting held', '2024-01-10T00:00:00Z');
    await write('first tie written', '2024-03-01T12:00:00Z');
    await write('second tie written', '2024-03-01T12:00:00Z');
    const order = async (args: Json) =>
      (await ok('memory_list', { namespace: 'timeline', ...args })).memories.map((m: Json) => m.content);
    assert.deepEqual(await order({}), [
      'standup moved to 10:00',
      'second tie written',
      'first tie written',
      'kickoff meeting held',
    ]);
    assert.deepEqual(await order({ order: 'oldest', limit: 2 }), [
      'kickoff meeting held',
      'first tie written',
    ]);
    assert.deepEqual(
      await order({ occurred_after: '2024-02-01T00:00:00Z', occurred_before: '2024-04-01T00:00:00+00:00' }),
      ['second tie written', 'first tie written'],
    );
    const search = await ok('memory_search', {
      query: 'meeting',
      namespace: 'timeline',
      occurred_before: '2024-02-01T00:00:00Z',
      mode: 'keyword',
    });
    assert.deepEqual(
      search.hits.map((h: Json) => h.content),
      ['kickoff meeting held'],
    );
    assert.match(await fails('memory_list', { occurred_after: 'last week' }), /→ at occurred_after/);
  });

  test('an import leaves its memories pending; the running gateway embeds them, or the command does with --embed', async () => {
    const file = join(gw.dataDir, 'import-embed.jsonl');
    await writeLines(file, [
      { content: 'the ferry to Cacilhas leaves every twenty minutes', occurred_at: '2025-02-01T08:00:00Z' },
      { content: 'the tram 28 is crowded in the afternoon', tags: ['transit'] },
    ]);
    // The command alone embeds nothing (MEMORY_EMBEDDINGS=none here); the gateway does.
    const imported = await memoryCli(['import', file, '--key', gw.apiKeyId], {
      DATA_DIR: gw.dataDir,
      MEMORY_EMBEDDINGS: 'none',
    });
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /2 memories wait for their embedding/);
    await waitFor(async () => (await ok('memory_stats')).pending_embeddings === 0, {
      what: 'the gateway to embed the imported memories',
    });
    const found = await ok('memory_search', { query: 'ferry to Cacilhas', mode: 'vector' });
    assert.equal(found.hits[0].content, 'the ferry to Cacilhas leaves every twenty minutes');
    assert.equal(found.hits[0].occurred_at, '2025-02-01T08:00:00.000Z');

    // No gateway on this store: --embed embeds in the command and waits.
    const dir = await mkdtemp(join(tmpdir(), 'memory-import-embed-'));
    try {
      const env = { DATA_DIR: dir, ...contractEmbeddingsEnv(embeddings) };
      const key = await newKey(env);
      const embedded = await memoryCli(['import', file, '--key', key, '--embed'], env);
      assert.equal(embedded.code, 0, embedded.stderr);
      assert.match(embedded.stderr, /embedding \[#{24}\] 100% 2\/2/);
      const store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
      try {
        const stats = await store.stats(key, Date.now());
        assert.deepEqual([stats.count, stats.pendingEmbeddings, stats.failedEmbeddings], [2, 0, 0]);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
