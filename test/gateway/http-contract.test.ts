/**
 * The HTTP contract, run once per engine: the same assertions hold for uWebSockets.js and
 * node:http, so neither adapter can drift from the other. Body limits, Origin, ports,
 * content negotiation, CORS and text encoding are in http-edges.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENGINES, engineSkip } from '../support/engines.ts';
import type { TestGateway } from '../support/gateway.ts';
import { CONTRACT_ENV, gatewayForBlock, MCP_HEADERS, raw, recordingBroker, rpc } from '../support/raw-mcp.ts';

for (const engine of ENGINES) {
  describe(`HTTP contract on the ${engine} engine`, { skip: engineSkip(engine) }, () => {
    let gw: TestGateway;
    const broker = recordingBroker();
    gatewayForBlock({ engine, broker, env: CONTRACT_ENV }, (started) => {
      gw = started;
    });

    test('GET /healthz answers liveness only, without a key', async () => {
      const res = await raw(gw, 'GET', '/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { status: 'ok' });
      const withQuery = await raw(gw, 'GET', '/healthz?verbose=1');
      assert.equal(withQuery.status, 200);
    });

    describe('every other request needs a registered key, checked before routing', () => {
      const refusedKeys: Array<[string, Record<string, string>]> = [
        ['missing', {}],
        ['empty', { 'x-api-key': '' }],
        ['whitespace', { 'x-api-key': '   ' }],
        ['malformed', { 'x-api-key': 'not-a-key' }],
        ['wrong prefix', { 'x-api-key': 'sk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }],
        ['unregistered', { 'x-api-key': 'mcp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }],
        ['in another header', { authorization: 'Bearer KEY' }],
      ];
      for (const [name, headers] of refusedKeys) {
        test(`${name} key: 401 with a JSON error, no tool runs`, async () => {
          const resolved = Object.fromEntries(
            Object.entries(headers).map(([k, v]) => [k, v.replace('KEY', gw.apiKey)]),
          );
          const res = await raw(
            gw,
            'POST',
            '/event/mcp',
            { ...MCP_HEADERS, ...resolved },
            JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'event_topics' } }),
          );
          assert.equal(res.status, 401);
          assert.equal(JSON.parse(res.body).error, 'unauthorized');
          assert.ok(!res.body.includes(gw.apiKey));
          assert.deepEqual(broker.calls, []);
        });
      }

      const trickyPaths = [
        '/event/mcp/',
        '//event/mcp',
        '/event//mcp',
        '/EVENT/mcp',
        '/event/MCP',
        '/event/%6dcp',
        '/%65vent/mcp',
        '/event/mcp?x-api-key=anything',
        '/event/mcp/../mcp',
        '/healthz/',
        '/healthz/../event/mcp',
        '/memory/mcp',
        '/',
        '/nope',
      ];
      for (const path of trickyPaths) {
        test(`path ${path} without a key: 401`, async () => {
          const res = await raw(
            gw,
            'POST',
            path,
            MCP_HEADERS,
            '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
          );
          assert.equal(res.status, 401);
        });
      }
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
        test(`${method} /event/mcp without a key: 401`, async () => {
          const res = await raw(gw, method, '/event/mcp');
          assert.equal(res.status, 401);
        });
      }
      test('POST /healthz is not exempt', async () => {
        assert.equal((await raw(gw, 'POST', '/healthz', {}, '')).status, 401);
      });
      test('a revoked key is refused', async () => {
        const extra = gw.withStore((store) => store.create('to-revoke'));
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: 1, method: 'ping' }, {}, extra.key)).status, 200);
        gw.withStore((store) => store.revoke(extra.id));
        const res = await rpc(gw, { jsonrpc: '2.0', id: 2, method: 'ping' }, {}, extra.key);
        assert.equal(res.status, 401);
        assert.match(JSON.parse(res.body).message, /revoked/);
      });
    });

    describe('with a valid key', () => {
      const notRoutes = [
        '/event/mcp/',
        '//event/mcp',
        '/EVENT/mcp',
        '/event/%6dcp',
        '/nosuch/mcp',
        '/',
        '/healthz/',
      ];
      for (const path of notRoutes) {
        test(`${path}: 404`, async () => {
          const res = await raw(gw, 'POST', path, { ...MCP_HEADERS, 'x-api-key': gw.apiKey }, '{}');
          assert.equal(res.status, 404);
        });
      }
      test('the query string does not change the route', async () => {
        const res = await raw(
          gw,
          'POST',
          '/event/mcp?foo=bar',
          { ...MCP_HEADERS, 'x-api-key': gw.apiKey },
          '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        );
        assert.equal(res.status, 200);
      });
      for (const method of ['GET', 'DELETE', 'PUT']) {
        test(`${method} /event/mcp: 405 with Allow: POST`, async () => {
          const res = await raw(gw, method, '/event/mcp', { 'x-api-key': gw.apiKey });
          assert.equal(res.status, 405);
          assert.equal(res.headers.allow, 'POST');
        });
      }
    });

    describe('MCP Streamable HTTP, stateless', () => {
      test('initialize negotiates each supported version and issues no session id', async () => {
        for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
          const res = await rpc(gw, {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
          });
          assert.equal(res.status, 200);
          assert.match(String(res.headers['content-type']), /application\/json/);
          assert.equal(res.headers['mcp-session-id'], undefined);
          const body = JSON.parse(res.body);
          assert.equal(body.result.protocolVersion, version);
          assert.ok(body.result.capabilities.tools);
        }
      });
      test('initialize with an unknown version is offered the latest', async () => {
        const res = await rpc(gw, {
          jsonrpc: '2.0',
          id: 'a',
          method: 'initialize',
          params: {
            protocolVersion: '1999-01-01',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        });
        assert.equal(JSON.parse(res.body).result.protocolVersion, '2025-11-25');
      });
      test('an unsupported MCP-Protocol-Version header: 400', async () => {
        const res = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { 'mcp-protocol-version': '2024-01-01' },
        );
        assert.equal(res.status, 400);
        const body = JSON.parse(res.body);
        assert.match(body.error.message, /MCP-Protocol-Version/);
        // Without a params._meta claim this stays the 2025-era answer: -32600, id null.
        assert.equal(body.error.code, -32600);
        assert.equal(body.id, null);
      });
      test('a batch: 400', async () => {
        const res = await rpc(gw, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
        assert.equal(res.status, 400);
        assert.equal(JSON.parse(res.body).error.code, -32600);
      });
      test('invalid JSON: 400 with -32700', async () => {
        const res = await raw(
          gw,
          'POST',
          '/event/mcp',
          { ...MCP_HEADERS, 'x-api-key': gw.apiKey },
          '{"jsonrpc":',
        );
        assert.equal(res.status, 400);
        assert.equal(JSON.parse(res.body).error.code, -32700);
      });
      test('a non-JSON content type: 415', async () => {
        const res = await raw(
          gw,
          'POST',
          '/event/mcp',
          { 'content-type': 'text/plain', 'x-api-key': gw.apiKey },
          '{}',
        );
        assert.equal(res.status, 415);
      });
      test('unknown method: -32601', async () => {
        const res = await rpc(gw, { jsonrpc: '2.0', id: 7, method: 'resources/list' });
        const body = JSON.parse(res.body);
        assert.equal(body.id, 7);
        assert.equal(body.error.code, -32601);
      });
      test('unknown tool: -32602', async () => {
        const res = await rpc(gw, {
          jsonrpc: '2.0',
          id: 8,
          method: 'tools/call',
          params: { name: 'nope', arguments: {} },
        });
        assert.equal(JSON.parse(res.body).error.code, -32602);
      });
      test('invalid tool arguments: a tool result with isError and the validation message', async () => {
        const res = await rpc(gw, {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'event_publish', arguments: { value: 42, topic: 'bad topic!' } },
        });
        const { result } = JSON.parse(res.body);
        assert.equal(result.isError, true);
        assert.match(result.content[0].text, /value/);
        assert.match(result.content[0].text, /topic may contain only/);
      });
      test('notifications and responses: 202 with no body', async () => {
        const notification = await rpc(gw, { jsonrpc: '2.0', method: 'notifications/initialized' });
        assert.equal(notification.status, 202);
        assert.equal(notification.body, '');
        const response = await rpc(gw, { jsonrpc: '2.0', id: 3, result: {} });
        assert.equal(response.status, 202);
      });
      test('a request whose id is null, an object, fractional or past 2^53: 400', async () => {
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: null, method: 'ping' })).status, 400);
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: {}, method: 'ping' })).status, 400);
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: 1.5, method: 'ping' })).status, 400);
        const huge = await raw(
          gw,
          'POST',
          '/event/mcp',
          { ...MCP_HEADERS, 'x-api-key': gw.apiKey },
          '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}',
        );
        assert.equal(huge.status, 400);
      });
      test('an invalid message with a readable id gets that id back', async () => {
        const res = await rpc(gw, { jsonrpc: '2.0', id: 42, method: 7 });
        assert.equal(res.status, 400);
        assert.equal(JSON.parse(res.body).id, 42);
      });
      test('tools/list answers the six event tools with schemas and annotations', async () => {
        const { result } = JSON.parse((await rpc(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body);
        const names = result.tools.map((tool: { name: string }) => tool.name);
        assert.deepEqual(names, [
          'event_capabilities',
          'event_publish',
          'event_consume',
          'event_topics',
          'event_create_topic',
          'event_delete_topic',
        ]);
        const byName = Object.fromEntries(result.tools.map((tool: { name: string }) => [tool.name, tool]));
        assert.equal(byName.event_topics.annotations.readOnlyHint, true);
        assert.equal(byName.event_delete_topic.annotations.destructiveHint, true);
        assert.deepEqual(byName.event_publish.inputSchema.required, ['value']);
        assert.equal(byName.event_consume.inputSchema.properties.max.default, 10);
        assert.match(byName.event_consume.description, /untrusted/);
      });
    });
  });
}
