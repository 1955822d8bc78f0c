/** Key scopes over real HTTP with the MCP SDK client: refusals are tool errors naming the scope. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FULL_SCOPES, type KeyScopes } from '../../gateway/core/scopes.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { postToolCall } from '../support/tool-call.ts';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

function keyWith(scopes: KeyScopes): string {
  return gw.withStore((store) => store.create('scoped', null, { scopes })).key;
}

async function connect(key: string, namespace = 'event'): Promise<Client> {
  const client = new Client({ name: 'scope-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/${namespace}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text: string }[])[0]?.text ?? '';
}

test('a read-only key calls read-only tools and is refused the rest, naming read-write', async () => {
  const client = await connect(keyWith({ ...FULL_SCOPES, readOnly: true }));
  try {
    const allowed = await client.callTool({ name: 'event_capabilities', arguments: {} });
    assert.notEqual(allowed.isError, true);
    const refused = await client.callTool({ name: 'event_publish', arguments: { topic: 'a', value: 'v' } });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /lacks the scope read-write/);
  } finally {
    await client.close();
  }
});

test('a key limited to other namespaces is refused on event, naming namespace:event', async () => {
  const key = keyWith({ ...FULL_SCOPES, namespaces: ['skills'] });
  const response = await postToolCall(`${gw.url}/event/mcp`, key, 'event_capabilities');
  const body = JSON.stringify(await response.json());
  assert.match(body, /namespace:event/);
  assert.doesNotMatch(body, /"ready"/, 'the tool never ran');
});

test('topic patterns: publish inside the pattern reaches the namespace, outside it does not', async () => {
  const client = await connect(keyWith({ ...FULL_SCOPES, publishTopics: ['orders.*'], consumeTopics: [] }));
  try {
    const inside = await client.callTool({
      name: 'event_publish',
      arguments: { topic: 'orders.eu', value: 'v' },
    });
    // No broker worker runs in this test: reaching the namespace shows as its own error.
    assert.doesNotMatch(textOf(inside), /lacks the scope/);
    const outside = await client.callTool({
      name: 'event_publish',
      arguments: { topic: 'payments', value: 'v' },
    });
    assert.match(textOf(outside), /lacks the scope event:publish:payments/);
    const consume = await client.callTool({ name: 'event_consume', arguments: { topic: 'orders.eu' } });
    assert.match(textOf(consume), /lacks the scope event:consume:orders.eu/);
  } finally {
    await client.close();
  }
});

test('tools/list shows a key only the tools it may call', async () => {
  const client = await connect(keyWith({ ...FULL_SCOPES, readOnly: true }));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['event_capabilities', 'event_topics']);
    assert.ok(tools.every((tool) => tool.annotations?.readOnlyHint === true));
  } finally {
    await client.close();
  }
  const full = await connect(gw.apiKey);
  try {
    assert.equal((await full.listTools()).tools.length, 6, 'an unlimited key still sees every tool');
  } finally {
    await full.close();
  }
});

test('a namespace outside the key is refused at connect, naming namespace:event', async () => {
  await assert.rejects(connect(keyWith({ ...FULL_SCOPES, namespaces: ['skills'] })), /namespace:event/);
});

test('on a 2026-07-28 request the refusal comes from the headers, before the body is read', async () => {
  const key = keyWith({ ...FULL_SCOPES, namespaces: ['skills'] });
  const response = await fetch(`${gw.url}/event/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    },
    // Not even JSON: a refusal from the headers never looks at it.
    body: 'this body is never parsed',
  });
  assert.equal(response.status, 403);
  assert.match(JSON.stringify(await response.json()), /lacks the scope namespace:event/);
});
