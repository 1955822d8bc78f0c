/**
 * The optional write-time decision (MEMORY_WRITE_DECIDER=llm) over real MCP, against the
 * loopback OpenAI chat-completions contract server: update and delete supersede, skip
 * stores nothing, and any answer that cannot be used stores the memory as new.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ChatBody, type OpenAiContract, startOpenAiContract } from '../../support/contracts/openai.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { whileCollecting } from '../../support/gc.ts';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../support/openai-embeddings.ts';

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field below
type Json = Record<string, any>;

/** The existing memories the gateway showed the model, as it sent them. */
function shown(body: ChatBody): { id: string; content: string }[] {
  return JSON.parse(body.messages.at(-1)!.content!).existing;
}

describe('memory write decision by an OpenAI-compatible model', () => {
  let gw: TestGateway;
  let embeddings: EmbeddingsServer;
  let chat: OpenAiContract;
  let client: Client;

  async function write(content: string, namespace: string): Promise<Json> {
    const result = await client.callTool({ name: 'memory_write', arguments: { content, namespace } });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    return result.structuredContent as Json;
  }
  const get = async (id: string) =>
    (await client.callTool({ name: 'memory_get', arguments: { id } })).structuredContent as Json;

  before(async () => {
    embeddings = await startEmbeddingsServer({ apiKey: 'sk-embed' });
    chat = await startOpenAiContract('sk-chat');
    gw = await startTestGateway({
      env: {
        MEMORY_EMBEDDINGS: 'openai',
        EMBEDDINGS_URL: embeddings.url,
        EMBEDDINGS_API_KEY: 'sk-embed',
        EMBEDDINGS_DIMENSIONS: '64',
        MEMORY_WRITE_DECIDER: 'llm',
        MEMORY_LLM_URL: chat.url,
        MEMORY_LLM_API_KEY: 'sk-chat',
        MEMORY_LLM_MODEL: 'decider-model',
        MEMORY_EMBED_TIMEOUT_MS: '3000',
      },
    });
    client = new Client({ name: 'decider-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
        requestInit: { headers: { 'X-API-Key': gw.apiKey } },
      }),
    );
  });

  after(async () => {
    await client?.close();
    await gw?.close();
    await chat?.close();
    await embeddings?.close();
  });

  test('a first memory is added without asking; update supersedes the one the model names', async () => {
    chat.reset(() => ({ content: '{"action":"add"}' }));
    const first = await write('home city of the user: Portland, Oregon', 'update');
    assert.equal(first.status, 'created');
    assert.equal(chat.bodies.length, 0, 'nothing related was stored, so the model was not asked');
    chat.reset((body) => ({ content: JSON.stringify({ action: 'update', id: shown(body)[0]!.id }) }));
    const second = await write('home city of the user: Austin, Texas', 'update');
    assert.deepEqual(second.decision, { action: 'update', target: first.id });
    assert.equal((await get(first.id)).superseded_by, second.id);
    const [body] = chat.bodies;
    assert.equal(body!.model, 'decider-model');
    assert.deepEqual(body!.response_format, { type: 'json_object' });
    assert.deepEqual(
      shown(body!).map((m) => m.id),
      [first.id],
    );
  });

  test('skip stores nothing and returns the memory that already says it', async () => {
    chat.reset(() => ({ content: '{"action":"add"}' }));
    const kept = await write('favourite tea of the user: sencha, no sugar', 'skip');
    chat.reset((body) => ({ content: JSON.stringify({ action: 'skip', id: shown(body)[0]!.id }) }));
    const again = await write('favourite tea of the user: sencha without sugar', 'skip');
    assert.equal(again.status, 'unchanged');
    assert.equal(again.id, kept.id);
    const stats = (await client.callTool({ name: 'memory_stats', arguments: {} })).structuredContent as Json;
    assert.equal(stats.by_namespace.skip, 1);
  });

  test('an answer that cannot be used stores the memory as new and says why', async () => {
    chat.reset(() => ({ content: '{"action":"add"}' }));
    const base = await write('gym schedule of the user: Monday and Thursday mornings', 'fallback');
    for (const [reply, reason] of [
      ['not json at all', /not the JSON asked for/],
      [JSON.stringify({ action: 'update', id: crypto.randomUUID() }), /not shown/],
      [JSON.stringify({ action: 'merge' }), /not the JSON asked for/],
    ] as const) {
      chat.reset(() => ({ content: reply }));
      const written = await write(
        `gym schedule of the user: Monday and Thursday evenings ${reply.length}`,
        'fallback',
      );
      assert.equal(written.status, 'created');
      assert.equal(written.decision.action, 'add');
      assert.match(written.decision.fallback, reason);
    }
    assert.equal((await get(base.id)).superseded_by, null);
  });

  test('a model that stalls mid-answer leaves the write to be stored as new at the deadline', async () => {
    chat.reset(() => ({ content: '{"action":"add"}' }));
    await write('commute of the user: the 8:10 train from Ashford', 'stall');
    const asked = chat.server.count('POST /v1/chat/completions');
    chat.server.faults.push({
      match: 'POST /v1/chat/completions',
      stall: 'half',
      body: JSON.stringify({ choices: [{ message: { content: '{"action":"add"}' } }] }),
    });
    // Collections during the wait: a deadline held only weakly would be lost (test/support/gc.ts).
    const written = await whileCollecting(write('commute of the user: the 8:40 train from Ashford', 'stall'));
    assert.equal(chat.server.count('POST /v1/chat/completions'), asked + 1, 'the model was asked');
    assert.equal(written.status, 'created');
    assert.match(written.decision.fallback, /model unreachable \(TimeoutError\)/);
    await whileCollecting(chat.server.released());
  });
});
