/**
 * Keyword relevance keeps each memory's stems by its content hash (decision 0126): a memory
 * whose text is replaced is judged by its new words at once, and a memory whose text another
 * memory shares is judged by the words both hold. A real gateway on SQLite with no embedder
 * (keyword relevance decides every hit), over HTTP with the official MCP SDK client.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

let gw: TestGateway;
let client: Client;

interface Hit {
  id: string;
  content: string;
  relevance: number;
}

before(async () => {
  gw = await startTestGateway({ env: { MEMORY_EMBEDDINGS: 'none' } });
  client = new Client({ name: 'stems-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': gw.apiKey } },
    }),
  );
});
after(async () => {
  await client.close();
  await gw.close();
});

async function call<T>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent as T;
}

const search = async (query: string) =>
  (await call<{ hits: Hit[] }>('memory_search', { query, include_weak: true })).hits;

test('a memory whose text is replaced is judged by its new words', async () => {
  const { id } = await call<{ id: string }>('memory_write', {
    content: 'The harbour pilot boards the tanker at dawn',
  });
  const before = (await search('harbour pilot')).find((hit) => hit.id === id);
  assert.equal(before?.relevance, 1);

  await call('memory_update', { id, content: 'The lighthouse keeper winds the lamp at dusk' });
  const after = (await search('lighthouse keeper')).find((hit) => hit.id === id);
  // Judged by the old words, this hit would have no keyword relevance at all.
  assert.equal(after?.relevance, 1);
  assert.equal(
    (await search('harbour pilot')).find((hit) => hit.id === id),
    undefined,
    'the old words no longer find it',
  );
});

test('memories with the same words, written apart, are each judged by them', async () => {
  const first = await call<{ id: string }>('memory_write', {
    content: 'Ferry timetable:   winter sailings',
    namespace: 'one',
  });
  await search('ferry winter');
  const second = await call<{ id: string }>('memory_write', {
    content: 'Ferry timetable: winter sailings',
    namespace: 'two',
  });
  const hits = await search('ferry winter sailings');
  for (const id of [first.id, second.id]) assert.equal(hits.find((hit) => hit.id === id)?.relevance, 1);
});
