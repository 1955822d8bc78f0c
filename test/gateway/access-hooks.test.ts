/**
 * The per-key access hooks, on both engines: a 2026-07-28 call is refused from its routing
 * headers before its body is read, an allowed one runs only once the headers match the
 * body, a 2025-era call is judged from its body alone, and tools/list shows what the
 * filter lets a caller see in both eras.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CallDescription } from '../../gateway/mcp/access.ts';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

const PV = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': PV,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const BASE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const FORBIDDEN_TOOL = 'event_delete_topic';

const asked: CallDescription[] = [];
const brokerCalls: string[] = [];
const broker: BrokerCalls = {
  call(method) {
    brokerCalls.push(method);
    return Promise.reject(
      Object.assign(new Error('The broker worker is unreachable.'), { code: 'WORKER_UNREACHABLE' }),
    );
  },
};

async function send(gw: TestGateway, headers: Record<string, string>, message: unknown) {
  const res = await fetch(`${gw.url}/event/mcp`, {
    method: 'POST',
    headers: { ...BASE, 'x-api-key': gw.apiKey, ...headers },
    body: JSON.stringify(message),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are probed field by field.
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const DECLARED = 1000;
const START = '{"jsonrpc":"2.0",';

function isWholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function toolCall(id: number, name: string, meta = true) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {}, ...(meta ? { _meta: META } : {}) },
  };
}

for (const engine of ['uws', 'node'] as const) {
  describe(`access hooks on the ${engine} engine`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({
        engine,
        broker,
        access: {
          authorizeCall(caller, call) {
            assert.equal(caller.apiKeyId, gw.apiKeyId);
            asked.push(call);
            return call.toolName === FORBIDDEN_TOOL
              ? { message: `This key may not call ${FORBIDDEN_TOOL}: ask for the topics:admin scope.` }
              : null;
          },
          toolFilter: (_caller, namespace) => {
            assert.equal(namespace, 'event');
            return (name) => name !== FORBIDDEN_TOOL;
          },
        },
      });
    });
    after(() => gw.close());
    beforeEach(() => {
      asked.length = 0;
      brokerCalls.length = 0;
    });

    test('2026-07-28: a refused call is answered from its headers while its body is still unsent', async () => {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: gw.port,
            method: 'POST',
            path: '/event/mcp',
            agent: false,
            headers: {
              ...BASE,
              'x-api-key': gw.apiKey,
              'content-length': String(DECLARED),
              'MCP-Protocol-Version': PV,
              'Mcp-Method': 'tools/call',
              'Mcp-Name': FORBIDDEN_TOOL,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            let answered = false;
            res.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              if (answered || !isWholeJson(Buffer.concat(chunks).toString())) return;
              // The whole answer is here while the body is still unsent. Only now is the rest
              // of the declared body sent, so the gateway's lingering close can end the reply.
              answered = true;
              req.end(' '.repeat(DECLARED - START.length));
            });
            res.on('error', reject);
            res.on('end', () => {
              if (!answered) reject(new Error('the answer ended before a whole JSON body arrived'));
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
            });
          },
        );
        req.on('error', reject);
        // Only the start of the declared bytes is sent; the answer must not wait for the rest.
        req.write(START);
      });
      assert.equal(answer.status, 403);
      const body = JSON.parse(answer.body);
      assert.equal(body.error.code, -32001);
      assert.match(body.error.message, /topics:admin/);
      assert.equal(body.id, null);
      assert.deepEqual(asked, [{ namespace: 'event', method: 'tools/call', toolName: FORBIDDEN_TOOL }]);
      assert.deepEqual(brokerCalls, []);
    });

    test('2026-07-28: an allowed header with a different body tool is a mismatch, and nothing runs', async () => {
      const res = await send(
        gw,
        { 'MCP-Protocol-Version': PV, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'event_topics' },
        toolCall(1, FORBIDDEN_TOOL),
      );
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, -32020);
      assert.equal(res.body.id, 1);
      assert.deepEqual(brokerCalls, []);
    });

    test('2026-07-28: an allowed call is asked about once, from its headers, then runs', async () => {
      const res = await send(
        gw,
        { 'MCP-Protocol-Version': PV, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'event_topics' },
        toolCall(2, 'event_topics'),
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.result.resultType, 'complete');
      assert.deepEqual(asked, [{ namespace: 'event', method: 'tools/call', toolName: 'event_topics' }]);
      assert.deepEqual(brokerCalls, ['topics']);
    });

    test('2025 era: the body decides, whatever Mcp-* headers say', async () => {
      const refused = await send(
        gw,
        { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'event_topics' },
        toolCall(3, FORBIDDEN_TOOL, false),
      );
      assert.equal(refused.status, 403);
      assert.equal(refused.body.id, 3);
      assert.equal(refused.body.error.code, -32001);
      assert.deepEqual(brokerCalls, []);

      const allowed = await send(
        gw,
        { 'Mcp-Method': 'tools/call', 'Mcp-Name': FORBIDDEN_TOOL },
        toolCall(4, 'event_topics', false),
      );
      assert.equal(allowed.status, 200);
      assert.equal(allowed.body.result.resultType, undefined);
      assert.deepEqual(brokerCalls, ['topics']);
      assert.deepEqual(
        asked.map((call) => call.toolName),
        [FORBIDDEN_TOOL, 'event_topics'],
      );
    });

    test('tools/list shows only what the filter allows, in both eras', async () => {
      const modern = await send(
        gw,
        { 'MCP-Protocol-Version': PV, 'Mcp-Method': 'tools/list' },
        { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: META } },
      );
      const legacy = await send(gw, {}, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
      for (const res of [modern, legacy]) {
        const names = res.body.result.tools.map((tool: { name: string }) => tool.name);
        assert.equal(names.length, 5);
        assert.ok(!names.includes(FORBIDDEN_TOOL));
      }
      assert.equal(modern.body.result.cacheScope, 'private');
      assert.deepEqual(modern.body.result.tools, legacy.body.result.tools);
    });

    test('a refused key gets 401 before the hook is asked', async () => {
      const res = await fetch(`${gw.url}/event/mcp`, {
        method: 'POST',
        headers: {
          ...BASE,
          'x-api-key': 'mcp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
          'MCP-Protocol-Version': PV,
          'Mcp-Method': 'tools/call',
          'Mcp-Name': FORBIDDEN_TOOL,
        },
        body: JSON.stringify(toolCall(6, FORBIDDEN_TOOL)),
      });
      assert.equal(res.status, 401);
      assert.deepEqual(asked, []);
    });
  });
}
