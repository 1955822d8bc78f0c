/**
 * The HTTP contract at its edges, once per engine: body limits, Origin, a port in use,
 * Content-Type and Accept, CORS, and text that is not valid UTF-8.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { ENGINES, engineSkip } from '../support/engines.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { CONTRACT_ENV, gatewayForBlock, MCP_HEADERS, raw, recordingBroker, rpc } from '../support/raw-mcp.ts';

for (const engine of ENGINES) {
  describe(`HTTP edges on the ${engine} engine`, { skip: engineSkip(engine) }, () => {
    let gw: TestGateway;
    gatewayForBlock({ engine, broker: recordingBroker(), env: CONTRACT_ENV }, (started) => {
      gw = started;
    });

    describe('MCP Streamable HTTP, stateless', () => {
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
    });
  });
}
