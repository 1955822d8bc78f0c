/**
 * The TypeScript SDK's v2 client against a real gateway: in auto mode it probes
 * server/discover and must land on 2026-07-28; pinned to 2026-07-28 it must connect; in
 * its default mode (and as the v1 client) it must still use the 2025 handshake. The era
 * each request was served in is read from the gateway's own debug log, so a client that
 * silently fell back would fail these tests even though its calls succeed.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  Client,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

interface Served {
  era: string;
  method: string;
}

let gw: TestGateway;
const served: Served[] = [];

before(async () => {
  gw = await startTestGateway({
    env: { LOG_LEVEL: 'debug' },
    logDestination: {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; era?: string; method?: string };
        if (entry.msg === 'mcp request') served.push({ era: entry.era!, method: entry.method! });
      },
    },
  });
});
after(() => gw.close());
beforeEach(() => {
  served.length = 0;
});

async function connectV2(mode: VersionNegotiationMode | undefined, key = gw.apiKey): Promise<Client> {
  const client = new Client(
    { name: 'gateway-test-v2', version: '1.0.0' },
    mode === undefined ? {} : { versionNegotiation: { mode } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
    requestInit: { headers: { 'X-API-Key': key } },
  });
  await client.connect(transport);
  return client;
}

async function listAndCall(client: Client | V1Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 6);
  const result = await client.callTool({ name: 'event_capabilities', arguments: {} });
  assert.notEqual(result.isError, true);
  assert.equal(
    (result.structuredContent as { details: { worker: { reachable: boolean } } }).details.worker.reachable,
    false,
  );
}

describe('TypeScript SDK v2 client', () => {
  test('auto mode probes server/discover and lands on 2026-07-28', async () => {
    const client = await connectV2('auto');
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.ok(client.getDiscoverResult()?.supportedVersions.includes('2026-07-28'));
      assert.match(client.getInstructions() ?? '', /untrusted/);
      await listAndCall(client);
    } finally {
      await client.close();
    }
    assert.deepEqual(served, [
      { era: 'modern', method: 'server/discover' },
      { era: 'modern', method: 'tools/list' },
      { era: 'modern', method: 'tools/call' },
    ]);
  });

  test('pinned to 2026-07-28 it connects and calls tools', async () => {
    const client = await connectV2({ pin: '2026-07-28' });
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      await listAndCall(client);
    } finally {
      await client.close();
    }
    assert.ok(served.length >= 3);
    assert.ok(served.every((request) => request.era === 'modern'));
  });

  test('default mode still uses the 2025 handshake', async () => {
    const client = await connectV2(undefined);
    try {
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
      await listAndCall(client);
    } finally {
      await client.close();
    }
    assert.equal(served[0]?.method, 'initialize');
    assert.ok(served.every((request) => request.era === 'legacy'));
  });

  test('auto mode with an unregistered key fails as an authentication error, not a fallback', async () => {
    await assert.rejects(connectV2('auto', 'mcp_unregisteredunregisteredunregist'), (error: unknown) => {
      assert.ok(error instanceof SdkHttpError, String(error));
      assert.equal(error.code, SdkErrorCode.ClientHttpAuthentication);
      assert.equal(error.status, 401);
      return true;
    });
    // Refused before any MCP handling: no request was served in either era.
    assert.deepEqual(served, []);
  });
});

test('the v1 SDK client still works on the 2025 era', async () => {
  const client = new V1Client({ name: 'gateway-test-v1', version: '1.0.0' });
  await client.connect(
    new V1Transport(new URL(`${gw.url}/event/mcp`), { requestInit: { headers: { 'X-API-Key': gw.apiKey } } }),
  );
  try {
    assert.equal(client.getServerVersion()?.name, 'mcp-event-gateway-event');
    await listAndCall(client);
  } finally {
    await client.close();
  }
  assert.equal(served[0]?.method, 'initialize');
  assert.ok(served.every((request) => request.era === 'legacy'));
});
