/**
 * Both protocol eras on one endpoint, over raw HTTP, on both engines: the 2026-07-28 wire
 * (server/discover, resultType, cache hints, routing headers and their cross-check, the
 * status/code table) next to the 2025 handshake era, which must stay as it was.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are probed field by field.
  body: any;
}

const BASE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const PV = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': PV,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0' },
};

/** node:http sends header names as spelled, and a name given several values as several lines. */
function post(
  gw: TestGateway,
  headers: Array<[string, string]>,
  body: string,
  path = '/event/mcp',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const lines: Record<string, string[]> = {};
    for (const [name, value] of headers) {
      lines[name] ??= [];
      lines[name].push(value);
    }
    const req = request(
      { host: '127.0.0.1', port: gw.port, method: 'POST', path, headers: lines, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function base(gw: TestGateway): Array<[string, string]> {
  return [...Object.entries(BASE), ['x-api-key', gw.apiKey]];
}

/** A modern request: the envelope in the body and the matching routing headers, with overrides. */
function modern(
  gw: TestGateway,
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | null> = {},
): Promise<Answer> {
  const routing: Record<string, string | null> = {
    'MCP-Protocol-Version': PV,
    'Mcp-Method': method,
    ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    ...headers,
  };
  const sent = Object.entries(routing).filter((entry): entry is [string, string] => entry[1] !== null);
  return post(
    gw,
    [...base(gw), ...sent],
    JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: META, ...params } }),
  );
}

function legacy(gw: TestGateway, message: unknown, headers: Array<[string, string]> = []): Promise<Answer> {
  return post(gw, [...base(gw), ...headers], JSON.stringify(message));
}

function assertError(answer: Answer, status: number, code: number, id: unknown): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body?.error?.code, code, answer.text);
  assert.equal(answer.body?.id, id, answer.text);
  assert.equal(typeof answer.body?.error?.message, 'string');
}

/** Records the broker calls the tools make; a call to `slow` waits until its signal aborts. */
function recordingBroker(): BrokerCalls & { calls: string[]; aborted: string[] } {
  const calls: string[] = [];
  const aborted: string[] = [];
  return {
    calls,
    aborted,
    call(method, _params, options) {
      calls.push(method);
      if (method === 'topics') {
        return new Promise((_resolve, reject) => {
          options.signal?.addEventListener('abort', () => {
            aborted.push(method);
            reject(Object.assign(new Error('cancelled'), { code: 'CANCELLED' }));
          });
        });
      }
      return Promise.reject(
        Object.assign(new Error('The broker worker is unreachable.'), { code: 'WORKER_UNREACHABLE' }),
      );
    },
  };
}

for (const engine of ['uws', 'node'] as const) {
  describe(`protocol eras on the ${engine} engine`, () => {
    let gw: TestGateway;
    const broker = recordingBroker();
    before(async () => {
      gw = await startTestGateway({ engine, broker });
    });
    after(() => gw.close());

    describe('2026-07-28', () => {
      test('C1 server/discover: versions, capabilities, instructions, cache hints, server info in _meta', async () => {
        const res = await modern(gw, 1, 'server/discover');
        assert.equal(res.status, 200, res.text);
        assert.match(String(res.headers['content-type']), /application\/json/);
        const { result } = res.body;
        assert.equal(res.body.id, 1);
        assert.equal(result.resultType, 'complete');
        assert.deepEqual(result.supportedVersions, ['2026-07-28']);
        assert.ok(result.capabilities.tools);
        assert.match(result.instructions, /untrusted/);
        assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0);
        assert.equal(result.cacheScope, 'private');
        assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-event-gateway-event');
        assert.equal(result.serverInfo, undefined);
      });

      test('C2 tools/list: the same tools as the 2025 era, with resultType and cache hints', async () => {
        const res = await modern(gw, 2, 'tools/list');
        assert.equal(res.status, 200, res.text);
        const { result } = res.body;
        assert.equal(result.resultType, 'complete');
        assert.ok(Number.isInteger(result.ttlMs));
        assert.equal(result.cacheScope, 'private');
        const old = await legacy(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
        assert.deepEqual(result.tools, old.body.result.tools);
        assert.equal(result.tools.length, 6);
      });

      test('C3 tools/call: resultType, content, structuredContent, isError false', async () => {
        const res = await modern(gw, 'c3', 'tools/call', { name: 'event_capabilities', arguments: {} });
        assert.equal(res.status, 200, res.text);
        const { result } = res.body;
        assert.equal(res.body.id, 'c3');
        assert.equal(result.resultType, 'complete');
        assert.equal(result.isError, false);
        assert.equal(result.content[0].type, 'text');
        assert.equal(result.structuredContent.worker.reachable, false);
        assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
        assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-event-gateway-event');
      });

      test('a failing tool stays a result with isError true; an unknown tool is -32602 in-band', async () => {
        const failing = await modern(gw, 4, 'tools/call', { name: 'event_publish', arguments: { value: 1 } });
        assert.equal(failing.status, 200);
        assert.equal(failing.body.result.resultType, 'complete');
        assert.equal(failing.body.result.isError, true);
        assert.match(failing.body.result.content[0].text, /Invalid arguments/);
        assertError(await modern(gw, 5, 'tools/call', { name: 'nope', arguments: {} }), 200, -32602, 5);
      });

      test('C4/C5 Mcp-Name differing from or missing for the tool: 400 -32020, and nothing runs', async () => {
        const before = broker.calls.length;
        const lying = await modern(
          gw,
          6,
          'tools/call',
          { name: 'event_topics', arguments: {} },
          { 'Mcp-Name': 'event_capabilities' },
        );
        assertError(lying, 400, -32020, 6);
        const missing = await modern(
          gw,
          7,
          'tools/call',
          { name: 'event_topics', arguments: {} },
          { 'Mcp-Name': null },
        );
        assertError(missing, 400, -32020, 7);
        assert.equal(broker.calls.length, before);
      });

      test('C6 Mcp-Method differing, differing in case, or missing: 400 -32020', async () => {
        for (const value of ['prompts/list', 'TOOLS/LIST', null]) {
          assertError(await modern(gw, 8, 'tools/list', {}, { 'Mcp-Method': value }), 400, -32020, 8);
        }
      });

      test('C7 header names in any case, values with surrounding spaces: accepted', async () => {
        const res = await post(
          gw,
          [
            ...base(gw),
            ['mcp-protocol-version', PV],
            ['MCP-METHOD', 'tools/call'],
            ['mcp-name', '  event_capabilities\t'],
          ],
          JSON.stringify({
            jsonrpc: '2.0',
            id: 9,
            method: 'tools/call',
            params: { name: 'event_capabilities', arguments: {}, _meta: META },
          }),
        );
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.result.isError, false);
      });

      test('a routing header sent twice: 400 -32020', async () => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: 10,
          method: 'tools/list',
          params: { _meta: META },
        });
        const twiceMethod = await post(
          gw,
          [
            ...base(gw),
            ['MCP-Protocol-Version', PV],
            ['Mcp-Method', 'tools/list'],
            ['Mcp-Method', 'tools/list'],
          ],
          body,
        );
        assertError(twiceMethod, 400, -32020, 10);
        const twiceVersion = await post(
          gw,
          [
            ...base(gw),
            ['MCP-Protocol-Version', PV],
            ['MCP-Protocol-Version', PV],
            ['Mcp-Method', 'tools/list'],
          ],
          body,
        );
        assertError(twiceVersion, 400, -32020, 10);
        const twiceName = await post(
          gw,
          [
            ...base(gw),
            ['MCP-Protocol-Version', PV],
            ['Mcp-Method', 'tools/call'],
            ['Mcp-Name', 'event_capabilities'],
            ['Mcp-Name', 'event_capabilities'],
          ],
          JSON.stringify({
            jsonrpc: '2.0',
            id: 11,
            method: 'tools/call',
            params: { name: 'event_capabilities', arguments: {}, _meta: META },
          }),
        );
        assertError(twiceName, 400, -32020, 11);
      });

      test('C8 MCP-Protocol-Version missing: 400 -32020', async () => {
        assertError(
          await modern(gw, 12, 'tools/list', {}, { 'MCP-Protocol-Version': null }),
          400,
          -32020,
          12,
        );
      });

      test('C9 an unserved version in body and header: 400 -32022 with supported and requested', async () => {
        const res = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', 'v999.0.0'], ['Mcp-Method', 'tools/list']],
          JSON.stringify({
            jsonrpc: '2.0',
            id: 13,
            method: 'tools/list',
            params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
          }),
        );
        assertError(res, 400, -32022, 13);
        assert.deepEqual(res.body.error.data, { supported: ['2026-07-28'], requested: 'v999.0.0' });
      });

      test('C10 body v999.0.0 under a 2026-07-28 header: 400 -32020', async () => {
        const res = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', PV], ['Mcp-Method', 'tools/list']],
          JSON.stringify({
            jsonrpc: '2.0',
            id: 14,
            method: 'tools/list',
            params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
          }),
        );
        assertError(res, 400, -32020, 14);
      });

      test('C11 a 2026-07-28 header without the envelope, or an incomplete envelope: 400 -32602', async () => {
        const headers: Array<[string, string]> = [
          ...base(gw),
          ['MCP-Protocol-Version', PV],
          ['Mcp-Method', 'tools/list'],
        ];
        for (const params of [
          {},
          undefined,
          { _meta: { 'io.modelcontextprotocol/protocolVersion': PV } },
          {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': 7,
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        ]) {
          const res = await post(
            gw,
            headers,
            JSON.stringify({ jsonrpc: '2.0', id: 15, method: 'tools/list', params }),
          );
          assertError(res, 400, -32602, 15);
        }
      });

      test('C12 initialize, ping, logging/setLevel and unknown methods under the envelope: 404 -32601', async () => {
        for (const method of [
          'initialize',
          'ping',
          'logging/setLevel',
          'resources/subscribe',
          'unknown/method',
        ]) {
          const res = await modern(gw, `m-${method}`, method);
          assertError(res, 404, -32601, `m-${method}`);
        }
      });

      test('C13 Mcp-Name in the base64 form is decoded; a malformed one is 400 -32020', async () => {
        const encoded = `=?base64?${Buffer.from('event_capabilities').toString('base64')}?=`;
        const ok = await modern(
          gw,
          16,
          'tools/call',
          { name: 'event_capabilities', arguments: {} },
          { 'Mcp-Name': encoded },
        );
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.body.result.isError, false);
        for (const bad of [
          '=?base64?ZXZlbnRf*?=',
          '=?base64?ZXZlbnQ?=',
          '=?base64?ZXZlbnRfY2FwYWJpbGl0aWVz=?=',
        ]) {
          const res = await modern(
            gw,
            17,
            'tools/call',
            { name: 'event_capabilities', arguments: {} },
            { 'Mcp-Name': bad },
          );
          assertError(res, 400, -32020, 17);
        }
      });

      test('C19 a stray Mcp-Session-Id is ignored and never echoed', async () => {
        const res = await modern(gw, 18, 'tools/list', {}, { 'Mcp-Session-Id': 'abc' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['mcp-session-id'], undefined);
      });

      test('C21 no key or a wrong key: 401 before anything else, server/discover included', async () => {
        for (const key of [null, 'mcp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']) {
          const headers: Array<[string, string]> = [
            ...Object.entries(BASE),
            ['MCP-Protocol-Version', PV],
            ['Mcp-Method', 'server/discover'],
            ...(key ? [['x-api-key', key] as [string, string]] : []),
          ];
          const res = await post(
            gw,
            headers,
            JSON.stringify({ jsonrpc: '2.0', id: 19, method: 'server/discover', params: { _meta: META } }),
          );
          assert.equal(res.status, 401);
          assert.equal(res.body.error, 'unauthorized');
        }
      });

      test('C22 a batch holding an enveloped request: 400 -32600', async () => {
        const res = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', PV], ['Mcp-Method', 'tools/list']],
          JSON.stringify([{ jsonrpc: '2.0', id: 20, method: 'tools/list', params: { _meta: META } }]),
        );
        assert.equal(res.status, 400);
        assert.equal(res.body.error.code, -32600);
      });

      test('a notification under the envelope: 202 with no body', async () => {
        const res = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', PV], ['Mcp-Method', 'notifications/cancelled']],
          JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: META } }),
        );
        assert.equal(res.status, 202);
        assert.equal(res.text, '');
      });

      test('C23 a client that goes away mid-call cancels the tool', { timeout: 20_000 }, async () => {
        const controller = new AbortController();
        const pending = fetch(`${gw.url}/event/mcp`, {
          method: 'POST',
          signal: controller.signal,
          headers: {
            ...BASE,
            'x-api-key': gw.apiKey,
            'MCP-Protocol-Version': PV,
            'Mcp-Method': 'tools/call',
            'Mcp-Name': 'event_topics',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 21,
            method: 'tools/call',
            params: { name: 'event_topics', arguments: {}, _meta: { ...META, progressToken: 'p1' } },
          }),
        }).catch((error: Error) => error);
        while (!broker.calls.includes('topics')) await new Promise((resolve) => setTimeout(resolve, 10));
        controller.abort();
        assert.ok((await pending) instanceof Error);
        while (!broker.aborted.includes('topics')) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepEqual(broker.aborted, ['topics']);
        broker.calls.length = 0;
        broker.aborted.length = 0;
      });
    });

    describe('2025 era beside it', () => {
      test('C14 initialize without a version header: the legacy result, no resultType', async () => {
        const res = await legacy(gw, {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        });
        assert.equal(res.status, 200);
        assert.equal(res.body.result.protocolVersion, '2025-11-25');
        assert.equal(res.body.result.serverInfo.name, 'mcp-event-gateway-event');
        assert.equal(res.body.result.resultType, undefined);
      });

      test('C15 tools/list with a 2025 header and an empty _meta stays legacy: no resultType or cache hints', async () => {
        for (const params of [undefined, { _meta: {} }, { _meta: { progressToken: 1 } }]) {
          const res = await legacy(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list', params }, [
            ['MCP-Protocol-Version', '2025-11-25'],
          ]);
          assert.equal(res.status, 200);
          assert.deepEqual(Object.keys(res.body.result), ['tools']);
        }
      });

      test('C16 initialize under a 2026-07-28 header: 400 -32020', async () => {
        const res = await legacy(
          gw,
          {
            jsonrpc: '2.0',
            id: 3,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 't', version: '1' },
            },
          },
          [['MCP-Protocol-Version', PV]],
        );
        assertError(res, 400, -32020, 3);
      });

      test('C17 initialize asking for 2026-07-28 is offered 2025-11-25', async () => {
        const res = await legacy(gw, {
          jsonrpc: '2.0',
          id: 4,
          method: 'initialize',
          params: { protocolVersion: PV, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        });
        assert.equal(res.status, 200);
        assert.equal(res.body.result.protocolVersion, '2025-11-25');
      });

      test('C18 ping without the envelope: 200 {}', async () => {
        const res = await legacy(gw, { jsonrpc: '2.0', id: 5, method: 'ping' });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.result, {});
      });

      test('Mcp-* headers on a legacy request are not read: the body decides', async () => {
        const res = await legacy(
          gw,
          {
            jsonrpc: '2.0',
            id: 6,
            method: 'tools/call',
            params: { name: 'event_capabilities', arguments: {} },
          },
          [
            ['Mcp-Method', 'tools/list'],
            ['Mcp-Name', 'something-else'],
          ],
        );
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.result.structuredContent.worker.reachable, false);
        assert.equal(res.body.result.resultType, undefined);
      });

      test('C20 GET and DELETE: 405 whatever the headers say', async () => {
        for (const method of ['GET', 'DELETE']) {
          const res = await fetch(`${gw.url}/event/mcp`, {
            method,
            headers: { 'x-api-key': gw.apiKey, 'MCP-Protocol-Version': PV },
          });
          assert.equal(res.status, 405);
          assert.equal(res.headers.get('allow'), 'POST');
        }
      });
    });

    test('every mounted namespace answers both eras with the same tools', async () => {
      assert.ok(gw.gateway.namespaces.length >= 1);
      for (const ns of gw.gateway.namespaces) {
        const path = `/${ns}/mcp`;
        const discover = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', PV], ['Mcp-Method', 'server/discover']],
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } }),
          path,
        );
        assert.equal(discover.status, 200, `${ns}: ${discover.text}`);
        assert.equal(
          discover.body.result._meta['io.modelcontextprotocol/serverInfo'].name,
          `mcp-event-gateway-${ns}`,
        );
        const modernList = await post(
          gw,
          [...base(gw), ['MCP-Protocol-Version', PV], ['Mcp-Method', 'tools/list']],
          JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } }),
          path,
        );
        const legacyList = await post(
          gw,
          base(gw),
          JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
          path,
        );
        assert.equal(modernList.body.result.resultType, 'complete', ns);
        assert.deepEqual(modernList.body.result.tools, legacyList.body.result.tools, ns);
        assert.ok(legacyList.body.result.tools.length > 0, ns);
      }
    });
  });
}
