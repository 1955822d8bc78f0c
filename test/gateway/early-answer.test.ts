/**
 * A request answered before its body was read (413 for a body over the limit, 401 for a
 * bad key) must still be readable by real clients that are busy sending: the gateway
 * reads and drops the rest of the body (a lingering close) instead of resetting the
 * connection under the client's writes. Clients run in their own processes, many times
 * each, because the failure is a race.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LINGER } from '../../gateway/http/engine.ts';
import { PUBLISH_MAX_MESSAGE_BYTES } from '../../shared/event/limits.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { runPython } from '../support/python.ts';

const run = promisify(execFile);
const TIMES = 20;
/** Three times the default MCP_MAX_BODY_BYTES (1 MiB). */
const BIG = 3 * 1024 * 1024;
const EXPECTED = { '413': 'payload_too_large', '401': 'unauthorized' } as const;

async function nodeClient(gw: TestGateway, client: 'fetch' | 'sdk', status: '413' | '401') {
  const script = join(import.meta.dirname, 'support', 'early-answer-client.ts');
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      script,
      client,
      status,
      `${gw.url}/event/mcp`,
      gw.dataDir,
      gw.apiKey,
      String(TIMES),
      String(BIG),
    ],
    { maxBuffer: 1024 * 1024, timeout: 240_000 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
}

const HTTPX_SCRIPT = `
import json, sys, httpx
url, key, times, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "event_publish", "arguments": {"value": "x" * size}}})
outcomes = {}
for _ in range(times):
    try:
        r = httpx.post(url, content=body, timeout=60, headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "x-api-key": key})
        outcome = f"{r.status_code} {r.json().get('error')}"
    except Exception as e:
        outcome = f"error: {type(e).__name__}: {e}"[:300]
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
print(json.dumps(outcomes))
`;

async function httpxClient(gw: TestGateway, status: '413' | '401') {
  const key = status === '401' ? 'mcp_notregisterednotregisterednotregi' : gw.apiKey;
  const out = await runPython(HTTPX_SCRIPT, [`${gw.url}/event/mcp`, key, String(TIMES), String(BIG)], {
    timeoutMs: 240_000,
  });
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>;
}

for (const engine of ['uws', 'node'] as const) {
  describe(`early answers are readable on the ${engine} engine`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ engine, env: { API_KEY_CACHE_TTL_MS: '0' } });
    });
    after(() => gw.close());

    for (const status of ['413', '401'] as const) {
      const want = { [`${status} ${EXPECTED[status]}`]: TIMES };
      test(`Node fetch reads the ${status} every time`, { timeout: 300_000 }, async () => {
        assert.deepEqual(await nodeClient(gw, 'fetch', status), want);
      });
      test(`the MCP SDK client reads the ${status} every time`, { timeout: 300_000 }, async () => {
        assert.deepEqual(await nodeClient(gw, 'sdk', status), want);
      });
      test(`Python httpx reads the ${status} every time`, { timeout: 600_000 }, async () => {
        assert.deepEqual(await httpxClient(gw, status), want);
      });
    }

    test('the 413 names the limit and how to stay under it', async () => {
      const res = await fetch(`${gw.url}/event/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gw.apiKey },
        body: 'x'.repeat(BIG),
      });
      assert.equal(res.status, 413);
      const { message } = (await res.json()) as { message: string };
      assert.match(message, /1048576 bytes/);
      assert.match(message, /MCP_MAX_BODY_BYTES/);
    });

    test('an event_publish value over the message limit is a tool error that says the limit and what to do', async () => {
      const client = new Client({ name: 'early-answer', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
          requestInit: { headers: { 'X-API-Key': gw.apiKey } },
        }),
      );
      try {
        // Under the HTTP body limit, over the per-message limit.
        const value = 'é'.repeat(PUBLISH_MAX_MESSAGE_BYTES / 2 + 1);
        const result = await client.callTool({ name: 'event_publish', arguments: { value, topic: 't' } });
        assert.equal(result.isError, true);
        const text = JSON.stringify(result.content);
        assert.match(text, new RegExp(`${PUBLISH_MAX_MESSAGE_BYTES + 2} bytes`));
        assert.match(text, new RegExp(`at most ${PUBLISH_MAX_MESSAGE_BYTES} bytes`));
        assert.match(text, /Split the payload/);
      } finally {
        await client.close();
      }
    });

    test('a client that keeps sending past the lingering bound is cut off, and nothing is kept', {
      timeout: 120_000,
    }, async () => {
      // Declares far more than the bound and streams it: the gateway answers 413 at once,
      // drops what follows, and closes once LINGER.maxBytes have been dropped.
      const declared = LINGER.maxBytes * 4;
      const outcome = await new Promise<{ sent: number; answer: string }>((resolve) => {
        const socket = connect(gw.port, '127.0.0.1');
        let answer = '';
        let sent = 0;
        const chunk = Buffer.alloc(256 * 1024, 120);
        socket.on('data', (data) => {
          answer += data.toString('latin1');
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ sent, answer }));
        socket.write(
          `POST /event/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nx-api-key: ${gw.apiKey}\r\ncontent-length: ${declared}\r\n\r\n`,
        );
        const pump = () => {
          while (sent < declared && !socket.destroyed) {
            sent += chunk.length;
            if (!socket.write(chunk)) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
      });
      assert.match(outcome.answer, /^HTTP\/1\.1 413 /);
      assert.ok(outcome.sent < declared, `the gateway read all ${outcome.sent} bytes instead of cutting off`);
      assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    });

    test('a client that stops sending mid-body after the answer is closed', { timeout: 60_000 }, async () => {
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(gw.port, '127.0.0.1');
        let received = '';
        socket.on('data', (data) => {
          received += data.toString('latin1');
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(received));
        socket.write(
          'POST /event/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"a":',
        );
      });
      assert.match(answer, /^HTTP\/1\.1 401 /);
      assert.match(answer, /unauthorized/);
    });
  });
}
