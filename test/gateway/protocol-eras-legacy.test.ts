/**
 * The 2025 handshake era on the endpoint that also serves 2026-07-28, on both engines: it
 * must stay as it was, and every mounted namespace lists the same tools in both eras.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TestGateway } from '../support/gateway.ts';
import {
  assertError,
  base,
  gatewayForBlock,
  legacy,
  META,
  PV,
  post,
  recordingBroker,
} from '../support/raw-mcp.ts';

for (const engine of ['uws', 'node'] as const) {
  describe(`protocol eras on the ${engine} engine`, () => {
    let gw: TestGateway;
    gatewayForBlock({ engine, broker: recordingBroker() }, (started) => {
      gw = started;
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
        assert.equal(res.body.result.structuredContent.details.worker.reachable, false);
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
