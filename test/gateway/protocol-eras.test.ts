/**
 * Both protocol eras on one endpoint, over raw HTTP, on both engines: the 2026-07-28 wire
 * (server/discover, resultType, cache hints, routing headers and their cross-check, the
 * status/code table). The 2025 era beside it is in protocol-eras-legacy.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TestGateway } from '../support/gateway.ts';
import { waitFor } from '../support/harness.ts';
import {
  assertError,
  BASE,
  base,
  gatewayForBlock,
  legacy,
  META,
  modern,
  PV,
  post,
  recordingBroker,
} from '../support/raw-mcp.ts';

for (const engine of ['uws', 'node'] as const) {
  describe(`protocol eras on the ${engine} engine`, () => {
    let gw: TestGateway;
    const broker = recordingBroker();
    gatewayForBlock({ engine, broker }, (started) => {
      gw = started;
    });

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
        assert.equal(result.structuredContent.details.worker.reachable, false);
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
        await waitFor(() => broker.calls.includes('topics'), { what: 'the broker to be called for topics' });
        controller.abort();
        assert.ok((await pending) instanceof Error);
        await waitFor(() => broker.aborted.includes('topics'), {
          what: 'the topics call to be aborted at the broker',
        });
        assert.deepEqual(broker.aborted, ['topics']);
        broker.calls.length = 0;
        broker.aborted.length = 0;
      });
    });
  });
}
