/** The official SDK client, over real HTTP, is the first user the gateway must satisfy. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
    requestInit: { headers: { 'X-API-Key': key } },
  });
  await client.connect(transport);
  return client;
}

test('the SDK client initializes, lists the six event tools and validates their output schemas', async () => {
  const client = await connect(gw.apiKey);
  try {
    assert.equal(client.getServerVersion()?.name, 'mcp-event-gateway-event');
    assert.match(client.getInstructions() ?? '', /untrusted/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      'event_capabilities',
      'event_consume',
      'event_create_topic',
      'event_delete_topic',
      'event_publish',
      'event_topics',
    ]);
    await client.ping();
  } finally {
    await client.close();
  }
});

test('event_capabilities answers while the broker worker is down, and says so', async () => {
  const client = await connect(gw.apiKey);
  try {
    const result = await client.callTool({ name: 'event_capabilities', arguments: {} });
    assert.notEqual(result.isError, true);
    const caps = result.structuredContent as {
      ready: boolean;
      details: { worker: { reachable: boolean; error: string } };
    };
    assert.equal(caps.ready, false);
    assert.equal(caps.details.worker.reachable, false);
    assert.match(caps.details.worker.error, /unreachable/);
    const publish = await client.callTool({ name: 'event_publish', arguments: { value: 'x', topic: 't' } });
    assert.equal(publish.isError, true);
    assert.match(JSON.stringify(publish.content), /unreachable/);
  } finally {
    await client.close();
  }
});

test('the SDK client is refused with 401 when its key is not registered', async () => {
  await assert.rejects(connect('mcp_unregisteredunregisteredunregist'), /401|Unauthorized/i);
});
