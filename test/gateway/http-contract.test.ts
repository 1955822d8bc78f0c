/**
 * The HTTP contract, run once per engine: the same assertions hold for uWebSockets.js and
 * node:http, so neither adapter can drift from the other.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http's client, because fetch normalises the paths these tests must send verbatim. */
function raw(
  gw: TestGateway,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: gw.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function rpc(gw: TestGateway, message: unknown, headers: Record<string, string> = {}, key = gw.apiKey) {
  return raw(
    gw,
    'POST',
    '/event/mcp',
    { ...MCP_HEADERS, 'x-api-key': key, ...headers },
    JSON.stringify(message),
  );
}

/** Records every call so a test can prove that no handler ran. */
function recordingBroker(): BrokerCalls & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    call(method) {
      calls.push(method);
      return Promise.reject(
        Object.assign(new Error('The broker worker is unreachable.'), { code: 'WORKER_UNREACHABLE' }),
      );
    },
  };
}

for (const engine of ['uws', 'node'] as const) {
  describe(`HTTP contract on the ${engine} engine`, () => {
    let gw: TestGateway;
    const broker = recordingBroker();

    before(async () => {
      gw = await startTestGateway({
        engine,
        broker,
        env: {
          MCP_ALLOWED_ORIGINS: 'https://allowed.example',
          MCP_MAX_BODY_BYTES: '4096',
          API_KEY_CACHE_TTL_MS: '0',
        },
      });
      assert.equal(gw.gateway.engine, engine);
    });
    after(() => gw.close());

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
      test('a declared body over the limit is refused before it is sent', { timeout: 30_000 }, async () => {
        const status = await new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: gw.port,
              method: 'POST',
              path: '/event/mcp',
              agent: false,
              headers: { ...MCP_HEADERS, 'x-api-key': gw.apiKey, 'content-length': '100000000' },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
              req.destroy();
            },
          );
          req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
          // Only a sliver of the declared 100 MB is ever sent.
          req.write('x'.repeat(4096));
        });
        assert.equal(status, 413);
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: 2, method: 'ping' })).status, 200);
      });
      test('an Origin that is not allowed: 403; an allowed one passes', async () => {
        const bad = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'https://evil.example' },
        );
        assert.equal(bad.status, 403);
        const good = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'https://allowed.example' },
        );
        assert.equal(good.status, 200);
      });
      test('a body over the limit: 413, and the server keeps serving', async () => {
        const big = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'ping',
          params: { pad: 'x'.repeat(8192) },
        });
        const res = await rpc(gw, JSON.parse(big));
        assert.equal(res.status, 413);
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: 2, method: 'ping' })).status, 200);
      });
      test('a second gateway on a port in use stops with a clear message', async () => {
        await assert.rejects(
          startTestGateway({ engine, env: { PORT: String(gw.port) } }),
          /already in use .*choose another PORT/,
        );
        assert.equal((await rpc(gw, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200);
      });
      test('Content-Type must be application/json exactly, parameters allowed: 415 otherwise', async () => {
        const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
        const post = (contentType?: string) =>
          raw(
            gw,
            'POST',
            '/event/mcp',
            {
              accept: MCP_HEADERS.accept,
              'x-api-key': gw.apiKey,
              ...(contentType === undefined ? {} : { 'content-type': contentType }),
            },
            ping,
          );
        for (const refused of [undefined, 'application/jsonx', 'text/json', 'application/json-seq', '']) {
          const res = await post(refused);
          assert.equal(res.status, 415, `content-type ${refused}`);
          assert.match(JSON.parse(res.body).error.message, /Content-Type must be application\/json/);
        }
        for (const accepted of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
          assert.equal((await post(accepted)).status, 200, `content-type ${accepted}`);
        }
      });
      test('Accept must allow application/json and text/event-stream: 406 otherwise', async () => {
        const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
        const post = (accept?: string) =>
          raw(
            gw,
            'POST',
            '/event/mcp',
            {
              'content-type': 'application/json',
              'x-api-key': gw.apiKey,
              ...(accept === undefined ? {} : { accept }),
            },
            ping,
          );
        for (const refused of [
          undefined,
          'application/json',
          'text/event-stream',
          'text/html',
          'application/json;q=0, text/event-stream',
        ]) {
          const res = await post(refused);
          assert.equal(res.status, 406, `accept ${refused}`);
          assert.match(JSON.parse(res.body).error.message, /Accept must allow both/);
        }
        for (const accepted of [
          'application/json, text/event-stream',
          'text/event-stream, application/json;q=0.9',
          '*/*',
          'application/*, text/*',
        ]) {
          assert.equal((await post(accepted)).status, 200, `accept ${accepted}`);
        }
      });
      test('CORS: a preflight from a listed origin is answered without a key; answers to it carry CORS headers', async () => {
        const preflight = await raw(gw, 'OPTIONS', '/event/mcp', {
          origin: 'https://allowed.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-api-key, content-type, mcp-protocol-version',
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers['access-control-allow-origin'], 'https://allowed.example');
        assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
        const allowedHeaders = String(preflight.headers['access-control-allow-headers']).toLowerCase();
        for (const name of [
          'x-api-key',
          'content-type',
          'accept',
          'mcp-protocol-version',
          'mcp-method',
          'mcp-name',
        ])
          assert.ok(allowedHeaders.includes(name), `preflight allows ${name}`);
        const ok = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'https://allowed.example' },
        );
        assert.equal(ok.status, 200);
        assert.equal(ok.headers['access-control-allow-origin'], 'https://allowed.example');
        const noKey = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'https://allowed.example' },
          'mcp_notregisterednotregisterednotregi',
        );
        assert.equal(noKey.status, 401);
        assert.equal(noKey.headers['access-control-allow-origin'], 'https://allowed.example');
      });
      test('CORS: other origins are unchanged (preflight 401, requests 403, no CORS headers)', async () => {
        const preflight = await raw(gw, 'OPTIONS', '/event/mcp', {
          origin: 'https://evil.example',
          'access-control-request-method': 'POST',
        });
        assert.equal(preflight.status, 401);
        assert.equal(preflight.headers['access-control-allow-origin'], undefined);
        const refused = await rpc(
          gw,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'https://evil.example' },
        );
        assert.equal(refused.status, 403);
        assert.equal(refused.headers['access-control-allow-origin'], undefined);
        const otherPath = await raw(gw, 'OPTIONS', '/nope', {
          origin: 'https://allowed.example',
          'access-control-request-method': 'POST',
        });
        assert.equal(otherPath.status, 401);
      });
      test('invalid UTF-8 in the body is refused, not replaced', async () => {
        const body = Buffer.concat([
          Buffer.from(
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"event_publish","arguments":{"value":"a',
          ),
          Buffer.from([0xff, 0xfe]),
          Buffer.from('"}}}'),
        ]);
        const res = await raw(gw, 'POST', '/event/mcp', { ...MCP_HEADERS, 'x-api-key': gw.apiKey }, body);
        assert.equal(res.status, 400);
        const { error } = JSON.parse(res.body);
        assert.equal(error.code, -32700);
        assert.match(error.message, /not valid UTF-8/);
      });
      test('a lone surrogate escape in a string is refused and located; a proper pair passes', async () => {
        const message = (value: string) =>
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"event_publish","arguments":{"value":"${value}","topic":"t"}}}`;
        for (const lone of ['x\\ud800', '\\udc00y', '\\ud800\\ud800']) {
          const res = await raw(
            gw,
            'POST',
            '/event/mcp',
            { ...MCP_HEADERS, 'x-api-key': gw.apiKey },
            message(lone),
          );
          assert.equal(res.status, 400, lone);
          const { error } = JSON.parse(res.body);
          assert.equal(error.code, -32700);
          assert.match(error.message, /params\.arguments\.value holds a lone UTF-16 surrogate/);
        }
        const pair = await raw(
          gw,
          'POST',
          '/event/mcp',
          { ...MCP_HEADERS, 'x-api-key': gw.apiKey },
          message('\\ud83d\\ude00'),
        );
        assert.equal(pair.status, 200);
        assert.ok(JSON.parse(pair.body).result);
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
