/**
 * The Python MCP SDK 2.x client (`mcp` on PyPI, pinned in test/support/python-requirements.txt)
 * against a real gateway over real HTTP, with its own X-API-Key. In `mode="auto"` (its
 * default) it must land on 2026-07-28; in `mode="legacy"` it must keep the 2025 handshake.
 *
 * A call that succeeds proves nothing about the era (the gateway serves both), so two
 * witnesses are read: the gateway's own debug log names the era it served each request in,
 * and a recording proxy between client and gateway keeps every request's headers and body
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name, params._meta) as they crossed the wire.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type ApiKeyProxy, type ProxiedExchange, startApiKeyProxy } from '../support/api-key-proxy.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { runPython } from '../support/python.ts';

const MODERN = '2026-07-28';
const PV_META = 'io.modelcontextprotocol/protocolVersion';
const CAPS_META = 'io.modelcontextprotocol/clientCapabilities';
const TOOL = 'event_capabilities';
const EVENT_TOOLS = [
  'event_capabilities',
  'event_publish',
  'event_consume',
  'event_topics',
  'event_create_topic',
  'event_delete_topic',
];

interface Served {
  era: string;
  method: string;
}

interface ClientOutcome {
  protocolVersion?: string;
  serverInfo?: { name: string; version: string } | null;
  tools?: string[];
  isError?: boolean;
  structured?: { details?: { worker?: { reachable?: boolean } } };
  error?: string;
  message?: string;
  code?: number;
}

/** What one POST carried, read from the proxy's recording. */
interface WireRequest {
  method: string;
  /** Every line of each routing header, as sent (a repeated header would show twice). */
  protocolVersionHeader: string[];
  mcpMethodHeader: string[];
  mcpNameHeader: string[];
  sessionIdHeader: string[];
  apiKey: string[];
  /** params._meta exactly as sent; undefined when absent. */
  meta: Record<string, unknown> | undefined;
  status: number;
  /** The answer's result.resultType (a 2026-07-28 field); undefined when absent or no result. */
  resultType: unknown;
}

let gw: TestGateway;
let proxy: ApiKeyProxy;
const served: Served[] = [];
let script: string;

before(async () => {
  script = await readFile(join(import.meta.dirname, 'support', 'python-sdk-client.py'), 'utf8');
  gw = await startTestGateway({
    env: { LOG_LEVEL: 'debug' },
    logDestination: {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; era?: string; method?: string };
        if (entry.msg === 'mcp request') served.push({ era: entry.era!, method: entry.method! });
      },
    },
  });
  // No key of the proxy's own: the Python client's X-API-Key is what the gateway checks.
  proxy = await startApiKeyProxy(() => ({ url: gw.url }), { record: true });
});
after(async () => {
  await proxy?.close();
  await gw?.close();
});
beforeEach(() => {
  served.length = 0;
  proxy.exchanges.length = 0;
});

async function runClient(mode: string, key = gw.apiKey): Promise<ClientOutcome> {
  const out = await runPython(script, [`${proxy.url}/event/mcp`, key, mode, TOOL], { timeoutMs: 120_000 });
  return JSON.parse(out.trim().split('\n').pop()!) as ClientOutcome;
}

function resultTypeOf(body: Buffer): unknown {
  try {
    return (JSON.parse(body.toString('utf8')) as { result?: { resultType?: unknown } }).result?.resultType;
  } catch {
    return undefined;
  }
}

function wire(exchanges: ProxiedExchange[]): WireRequest[] {
  return exchanges.map((exchange) => {
    const body =
      exchange.requestBody.length > 0
        ? (JSON.parse(exchange.requestBody.toString('utf8')) as {
            method?: string;
            params?: { _meta?: Record<string, unknown> };
          })
        : {};
    const header = (name: string) => exchange.requestHeaders[name] ?? [];
    return {
      method: exchange.method === 'POST' ? (body.method ?? '(response)') : exchange.method,
      protocolVersionHeader: header('mcp-protocol-version'),
      mcpMethodHeader: header('mcp-method'),
      mcpNameHeader: header('mcp-name'),
      sessionIdHeader: header('mcp-session-id'),
      apiKey: header('x-api-key'),
      meta: body.params?._meta,
      status: exchange.status,
      resultType: resultTypeOf(exchange.responseBody),
    };
  });
}

function assertCalledTools(outcome: ClientOutcome): void {
  assert.equal(outcome.error, undefined, JSON.stringify(outcome));
  assert.deepEqual(outcome.tools, EVENT_TOOLS);
  assert.equal(outcome.isError, false);
  // The tool really ran: the test gateway has no broker worker, and says so.
  assert.equal(outcome.structured?.details?.worker?.reachable, false);
  assert.equal(outcome.serverInfo?.name, 'mcp-event-gateway-event');
}

describe('Python SDK 2.x client (mcp 2.3.0)', () => {
  test('mode="auto" probes server/discover and lands on 2026-07-28 for tools/list and tools/call', {
    timeout: 600_000,
  }, async () => {
    const outcome = await runClient('auto');
    assertCalledTools(outcome);
    assert.equal(outcome.protocolVersion, MODERN);

    // The gateway served every request as 2026-07-28, starting with the probe; no handshake.
    assert.deepEqual(served, [
      { era: 'modern', method: 'server/discover' },
      { era: 'modern', method: 'tools/list' },
      { era: 'modern', method: 'tools/call' },
    ]);

    // On the wire: each request claimed 2026-07-28 in its body and in its headers, once each.
    const posts = wire(proxy.exchanges).filter((request) => request.method !== 'DELETE');
    assert.deepEqual(
      posts.map((request) => request.method),
      ['server/discover', 'tools/list', 'tools/call'],
      JSON.stringify(posts),
    );
    for (const request of posts) {
      const why = JSON.stringify(request);
      assert.equal(request.status, 200, why);
      assert.deepEqual(request.apiKey, [gw.apiKey], why);
      assert.equal(request.meta?.[PV_META], MODERN, why);
      assert.equal(typeof request.meta?.[CAPS_META], 'object', why);
      assert.deepEqual(request.protocolVersionHeader, [MODERN], why);
      assert.deepEqual(request.mcpMethodHeader, [request.method], why);
      assert.deepEqual(request.sessionIdHeader, [], why);
      assert.equal(request.resultType, 'complete', why);
    }
    assert.deepEqual(posts[2]!.mcpNameHeader, [TOOL]);
    // Nothing else crossed: no initialize, no GET stream; a DELETE would need a session id it never got.
    assert.deepEqual(
      proxy.exchanges.filter((exchange) => exchange.method !== 'POST'),
      [],
    );
  });

  test('mode="2026-07-28" adopts the version without a probe', { timeout: 600_000 }, async () => {
    const outcome = await runClient(MODERN);
    assert.equal(outcome.error, undefined, JSON.stringify(outcome));
    assert.equal(outcome.protocolVersion, MODERN);
    assert.deepEqual(outcome.tools, EVENT_TOOLS);
    assert.equal(outcome.isError, false);
    assert.deepEqual(served, [
      { era: 'modern', method: 'tools/list' },
      { era: 'modern', method: 'tools/call' },
    ]);
    for (const request of wire(proxy.exchanges)) {
      assert.equal(request.meta?.[PV_META], MODERN, JSON.stringify(request));
      assert.deepEqual(request.protocolVersionHeader, [MODERN], JSON.stringify(request));
    }
  });

  test('mode="legacy" keeps the 2025 handshake: initialize first, no 2026-07-28 claim in any body or header', {
    timeout: 600_000,
  }, async () => {
    const outcome = await runClient('legacy');
    assertCalledTools(outcome);
    assert.equal(outcome.protocolVersion, '2025-11-25');

    assert.deepEqual(served, [
      { era: 'legacy', method: 'initialize' },
      { era: 'legacy', method: 'tools/list' },
      { era: 'legacy', method: 'tools/call' },
    ]);

    const posts = wire(proxy.exchanges);
    assert.deepEqual(
      posts.map((request) => request.method),
      ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'],
      JSON.stringify(posts),
    );
    for (const request of posts) {
      const why = JSON.stringify(request);
      // No claim in the body. (mcp 2.3.0 sends no params._meta at all in legacy mode; pre-release
      // 2.x snapshots sent an empty one, which protocol-eras.test.ts C15 keeps legacy too.)
      assert.ok(request.meta === undefined || !(PV_META in request.meta), why);
      assert.ok(!request.protocolVersionHeader.includes(MODERN), why);
      assert.deepEqual(request.mcpMethodHeader, [], why);
    }
    // The handshake goes out without a version header; later requests carry the negotiated one.
    assert.deepEqual(posts[0]!.protocolVersionHeader, []);
    for (const request of posts.slice(1)) assert.deepEqual(request.protocolVersionHeader, ['2025-11-25']);
    assert.equal(posts[1]!.status, 202);
    // The answers carry nothing of the 2026-07-28 era.
    for (const request of posts) assert.equal(request.resultType, undefined, JSON.stringify(request));
  });

  test('mode="auto" with an unregistered key fails to connect (the probe and the fallback handshake are both 401)', {
    timeout: 600_000,
  }, async () => {
    const outcome = await runClient('auto', 'mcp_unregisteredunregisteredunregist');
    assert.ok(outcome.error, JSON.stringify(outcome));
    assert.equal(outcome.protocolVersion, undefined);
    // Refused before any MCP handling: nothing was served in either era.
    assert.deepEqual(served, []);
    // mcp 2.3.0 takes the probe's 401 as "not modern" and falls back to initialize, which is
    // refused the same way; what it raises is a generic MCPError, not an authentication error.
    const requests = wire(proxy.exchanges);
    assert.deepEqual(
      requests.map((request) => [request.method, request.status]),
      [
        ['server/discover', 401],
        ['initialize', 401],
      ],
      JSON.stringify(requests),
    );
    assert.equal(outcome.error, 'MCPError', JSON.stringify(outcome));
  });
});
