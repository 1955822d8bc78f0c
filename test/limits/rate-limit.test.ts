/**
 * Per-key rate limits through a real gateway: the official MCP SDK client and raw HTTP,
 * memory writes stored in SQLite with embeddings from a loopback OpenAI-compatible server.
 * Rates are per minute with small bursts, so no refill happens within a test and the
 * counts are exact without any timing assumption.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ConfigError, loadGatewayConfig } from '../../gateway/config.ts';
import type { KeyLimits } from '../../gateway/core/key-limits.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../support/openai-embeddings.ts';
import { BASE } from '../support/raw-mcp.ts';

let gw: TestGateway;
let embeddings: EmbeddingsServer;

before(async () => {
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
  gw = await startTestGateway({
    engine: 'node',
    env: {
      ...contractEmbeddingsEnv(embeddings),
      // Limits changed with `keys update` apply on the next request.
      API_KEY_CACHE_TTL_MS: '0',
      RATE_LIMIT_DEFAULT: '1/min',
      RATE_LIMIT_DEFAULT_BURST: '4',
    },
  });
});

after(async () => {
  await gw?.close();
  await embeddings?.close();
});

function mintKey(limits: KeyLimits): { key: string; id: string } {
  return gw.withStore((store) => store.create(`limits-${Math.random()}`, 'limits-suite', { limits }));
}

function post(key: string, body: unknown, namespace = 'memory'): Promise<Response> {
  return fetch(`${gw.url}/${namespace}/mcp`, {
    method: 'POST',
    headers: { ...BASE, 'x-api-key': key },
    body: JSON.stringify(body),
  });
}

const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'limits-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

/** Requests admitted out of `count` sent one after another. */
async function admitted(key: string, count: number, namespace = 'memory'): Promise<number> {
  let ok = 0;
  for (let i = 0; i < count; i++) {
    const response = await post(key, listTools(i), namespace);
    await response.arrayBuffer();
    if (response.status === 200) ok += 1;
    else assert.equal(response.status, 429);
  }
  return ok;
}

describe('per-key rate limit', () => {
  test('a key over its burst gets 429 with Retry-After, the draft RateLimit headers and a JSON-RPC error naming it', async () => {
    const { key, id } = mintKey({ rate: { count: 1, per: 'min' }, burst: 3 });
    assert.equal(await admitted(key, 3), 3);
    const refused = await post(key, listTools(99));
    assert.equal(refused.status, 429);
    const retryAfter = refused.headers.get('retry-after') ?? '';
    assert.match(retryAfter, /^\d+$/);
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, retryAfter);
    // 1/min with a burst of 3: the full bucket refills in 180 s.
    assert.equal(refused.headers.get('ratelimit-policy'), '"per-key";q=3;w=180');
    assert.equal(refused.headers.get('ratelimit'), `"per-key";r=0;t=${retryAfter}`);
    const body = (await refused.json()) as {
      jsonrpc: string;
      id: null;
      error: { code: number; message: string; data: Record<string, unknown> };
    };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.match(body.error.message, new RegExp(`key ${id}`));
    assert.match(body.error.message, new RegExp(`Wait ${retryAfter} s`));
    assert.equal(body.error.data.code, 'rate_limited');
    assert.equal(body.error.data.keyId, id);
    assert.equal(body.error.data.retryAfterSeconds, Number(retryAfter));
    assert.ok((body.error.data.waitMs as number) > 0);
    assert.doesNotMatch(JSON.stringify(body), new RegExp(key));
  });

  test('nothing of a refused request runs: a memory_write over the limit stores nothing', async () => {
    const { key, id } = mintKey({ rate: { count: 1, per: 'min' }, burst: 4 });
    // The SDK client spends two requests on connecting (initialize and its notification).
    const client = await connect(key);
    const write = (n: number) =>
      client.callTool({ name: 'memory_write', arguments: { content: `rate limit note ${n}`, tags: ['rl'] } });
    assert.notEqual((await write(1)).isError, true);
    assert.notEqual((await write(2)).isError, true);
    await assert.rejects(write(3), /429|rate limit/i);
    await client.close().catch(() => {});
    // Memories are per key: lift its limit and look with the same key.
    gw.withStore((store) => store.setLimits(id, { unlimited: true }));
    const reader = await connect(key);
    const listed = await reader.callTool({ name: 'memory_list', arguments: { tags: ['rl'], limit: 0 } });
    assert.equal((listed.structuredContent as { memories: unknown[] }).memories.length, 2);
    await reader.close();
  });

  test("one key's flood leaves another key's budget untouched", async () => {
    const flooder = mintKey({ rate: { count: 1, per: 'min' }, burst: 2 });
    const calm = mintKey({ rate: { count: 1, per: 'min' }, burst: 5 });
    assert.equal(await admitted(flooder.key, 20), 2);
    assert.equal(await admitted(calm.key, 5), 5);
  });

  test('RATE_LIMIT_DEFAULT applies to keys without their own limit; --rate none lifts it', async () => {
    const plain = mintKey({});
    assert.equal(await admitted(plain.key, 10), 4);
    const lifted = mintKey({ unlimited: true });
    assert.equal(await admitted(lifted.key, 10), 10);
  });

  test('a changed limit applies on the next request; the limit counts across namespaces', async () => {
    const { key, id } = mintKey({ rate: { count: 1, per: 'min' }, burst: 2 });
    assert.equal(await admitted(key, 1, 'memory'), 1);
    assert.equal(await admitted(key, 3, 'event'), 1);
    gw.withStore((store) => store.setLimits(id, { rate: { count: 100, per: 's' }, burst: 50 }));
    assert.equal(await admitted(key, 10, 'event'), 10);
  });
});

describe('rate-limit settings', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ RATE_LIMIT_DEFAULT: '20/hour' }, /RATE_LIMIT_DEFAULT: "20\/hour" is not a rate; use N\/s or N\/min/],
    [
      { RATE_LIMIT_DEFAULT: '20/s', RATE_LIMIT_DEFAULT_BURST: 'lots' },
      /RATE_LIMIT_DEFAULT_BURST: "lots" is not a whole number/,
    ],
    [{ RATE_LIMIT_DEFAULT_BURST: '40' }, /RATE_LIMIT_DEFAULT_BURST needs RATE_LIMIT_DEFAULT/],
    [{ RATE_LIMIT_ON_STORE_ERROR: 'maybe' }, /RATE_LIMIT_ON_STORE_ERROR: must be allow or deny/],
    [{ RATE_LIMIT_REDIS_URL: 'http://localhost:6379' }, /RATE_LIMIT_REDIS_URL: must be a redis:\/\/ URL/],
  ];
  for (const [env, message] of bad) {
    test(`refuses ${JSON.stringify(env)} naming the setting and its form`, () => {
      assert.throws(
        () => loadGatewayConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match((error as Error).message, message);
          return true;
        },
      );
    });
  }

  test('parses a default rate and burst', () => {
    const config = loadGatewayConfig({ RATE_LIMIT_DEFAULT: '100/min', RATE_LIMIT_DEFAULT_BURST: '200' });
    assert.deepEqual(config.rateLimitDefault?.spec, { count: 100, per: 'min' });
    assert.equal(config.rateLimitDefault?.burst, 200);
    assert.equal(loadGatewayConfig({}).rateLimitDefault, null);
  });
});
