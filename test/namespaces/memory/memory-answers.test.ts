/**
 * What memory_search tells an agent, end to end with the bundled local embedder over real
 * MCP: errors that say what to fix (and store nothing), weak and empty answers that never
 * claim nothing is stored, include_weak, supersedes and include_superseded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field below
type Json = Record<string, any>;

describe('memory_search answers', () => {
  let gw: TestGateway;
  let client: Client;

  const call = (name: string, args: Json) => client.callTool({ name, arguments: args });
  async function ok(name: string, args: Json = {}): Promise<Json> {
    const result = await call(name, args);
    assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Json;
  }
  async function fails(name: string, args: Json): Promise<string> {
    const result = await call(name, args);
    assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.structuredContent)}`);
    return (result.content as { text: string }[])[0]!.text;
  }

  const facts = [
    "I'm Marcus Chen, I work as a structural engineer.",
    'We finally moved into the new apartment in Denver last weekend.',
    'I stopped eating meat about two years ago.',
    'My sister Priya is visiting in March.',
  ];

  before(async () => {
    gw = await startTestGateway({ env: { MEMORY_EMBEDDINGS: 'local', MEMORY_EMBED_RETRY_MS: '200' } });
    client = new Client({ name: 'memory-answers-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
        requestInit: { headers: { 'X-API-Key': gw.apiKey } },
      }),
    );
    for (const content of facts) await ok('memory_write', { content });
    await waitFor(async () => (await ok('memory_stats')).pending_embeddings === 0, {
      what: 'the local model to embed every memory',
      timeoutMs: 60_000,
    });
    assert.equal((await ok('memory_stats')).pending_embeddings, 0, 'the local model embedded every memory');
  });

  after(async () => {
    await client?.close();
    await gw?.close();
  });

  test('bad input gets a tool error naming what to fix, and nothing stored changes', async () => {
    const before = await ok('memory_stats');
    assert.match(await fails('memory_search', { query: 'name', limit: 0 }), /limit is 1 to 100/);
    assert.match(await fails('memory_search', { query: 'name', limit: 101 }), /limit is 1 to 100/);
    assert.match(await fails('memory_search', { query: 'name', limit: 2.5 }), /limit is a whole number/);
    assert.match(await fails('memory_search', { query: '   ' }), /query must hold at least one word/);
    assert.match(await fails('memory_search', { query: 'name', mode: 'fuzzy' }), /mode/);
    assert.match(
      await fails('memory_search', { query: 'name', recency: { half_life_days: 7, weight: 0.5 } }),
      /at most 0.1/,
    );
    const unknown = crypto.randomUUID();
    const refused = await fails('memory_write', { content: 'I moved to Boulder.', supersedes: unknown });
    assert.match(refused, new RegExp(`supersedes: no memory ${unknown}`));
    assert.match(await fails('memory_write', { content: 'x', supersedes: 'not-an-id' }), /supersedes/);
    const after = await ok('memory_stats');
    assert.equal(after.count, before.count);
  });

  test('every hit says how it matched, with raw scores, a 0-1 relevance and its times', async () => {
    // No word about the present: such a question may put a newer near-equal first (ranking.test.ts).
    const found = await ok('memory_search', {
      query: 'Which city does the user live in?',
      limit: 4,
      include_weak: true,
    });
    assert.equal(found.total_memories, facts.length);
    assert.ok(found.hits.length > 0);
    for (const hit of found.hits) {
      assert.ok(hit.relevance >= 0 && hit.relevance <= 1, JSON.stringify(hit));
      assert.ok(['vector', 'keyword', 'both'].includes(hit.source));
      assert.equal(typeof hit.score, 'number');
      assert.equal(typeof hit.weak, 'boolean');
      assert.ok(Date.parse(hit.created_at) > 0 && Date.parse(hit.updated_at) > 0);
    }
    const sorted = found.hits.map((hit: Json) => hit.relevance);
    assert.deepEqual(
      sorted,
      [...sorted].sort((a, b) => b - a),
    );
  });

  test('an answer not stored is weak or empty, says how much is stored, and never that nothing is', async () => {
    const query = 'What was the final score of the chess tournament in Reykjavik?';
    const found = await ok('memory_search', { query });
    assert.equal(found.weak, true);
    assert.match(found.note, /4 memories are stored for this key/);
    assert.doesNotMatch(found.note, /nothing relevant is stored/i);
    assert.ok(found.hits.every((hit: Json) => hit.weak));
    const closest = await ok('memory_search', { query, include_weak: true, limit: 10 });
    assert.equal(closest.hits.length, facts.length, 'include_weak shows the closest candidates');
    assert.ok(closest.hits.every((hit: Json) => hit.weak));
  });

  test('supersedes hides the replaced fact unless include_superseded', async () => {
    const old = (await ok('memory_search', { query: 'Denver apartment', limit: 1 })).hits[0];
    assert.match(old.content, /Denver/);
    const moved = await ok('memory_write', {
      content: 'Now living in Boulder after the job change.',
      supersedes: old.id,
    });
    const current = await ok('memory_search', { query: 'Denver apartment', limit: 10, include_weak: true });
    assert.ok(!current.hits.some((hit: Json) => hit.id === old.id), 'the replaced memory is hidden');
    const all = await ok('memory_search', { query: 'Denver apartment', limit: 10, include_superseded: true });
    const shown = all.hits.find((hit: Json) => hit.id === old.id);
    assert.equal(shown?.superseded_by, moved.id);
    assert.equal((await ok('memory_get', { id: old.id })).superseded_by, moved.id);
  });
});
