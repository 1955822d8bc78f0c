/**
 * Racing a key's limits: requests fired all at once at two gateway processes sharing one
 * real Valkey server, and at one process's two listener threads. Budgets under a lease
 * (burst < 128 per thread) are counted exactly, so these assert exact counts: a single
 * request over the burst or the quota is a bug, not noise. A refused request must leave
 * the budget as it was, and its Retry-After must be enough.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startValkey, type ValkeyServer } from '../../dev/valkey/valkey.ts';
import type { KeyLimits } from '../../gateway/core/key-limits.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { utcDay } from '../../gateway/limits/quotas.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { elapse, freePort, mintKey, openKeyStore, waitFor } from '../support/harness.ts';

let dataDir: string;
let valkey: ValkeyServer;
const gateways: GatewayProcess[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-limit-races-'));
  valkey = await startValkey(await freePort());
});
after(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await valkey?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function gateway(env: Record<string, string>): Promise<GatewayProcess> {
  const started = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    API_KEY_CACHE_TTL_MS: '0',
    ...env,
  });
  gateways.push(started);
  return started;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** One request on its own connection, so the kernel spreads a burst of them over listener threads. */
async function send(url: string, key: string, method: string, params?: unknown): Promise<Answer> {
  const response = await fetch(`${url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, connection: 'close' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, ...(params ? { params } : {}) }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** `count` requests at once, spread round-robin over the gateways' URLs. */
function race(urls: string[], key: string, count: number, method = 'tools/list', params?: unknown) {
  return Promise.all(
    Array.from({ length: count }, (_, i) => send(urls[i % urls.length]!, key, method, params)),
  );
}

function mint(limits: KeyLimits): { key: string; id: string } {
  return mintKey(dataDir, 'races', null, { limits });
}

function mintKeyWith(limits: KeyLimits, readOnly: boolean): { key: string; id: string } {
  return mintKey(dataDir, 'races', null, { limits, scopes: { ...FULL_SCOPES, readOnly } });
}

async function usage(keyId: string): Promise<Record<string, number>> {
  const store = openKeyStore(dataDir);
  try {
    return await store.quotaUsage(keyId, utcDay());
  } finally {
    store.close();
  }
}

function checkRefusal(answer: Answer, burst: number, windowSeconds: number): number {
  assert.equal(answer.status, 429, answer.text);
  const retryAfter = answer.headers.get('retry-after') ?? '';
  assert.match(retryAfter, /^[1-9]\d*$/);
  assert.equal(answer.headers.get('ratelimit'), `"per-key";r=0;t=${retryAfter}`);
  assert.equal(answer.headers.get('ratelimit-policy'), `"per-key";q=${burst};w=${windowSeconds}`);
  return Number(retryAfter);
}

const setups: Array<[string, () => Promise<string[]>]> = [
  [
    'two processes sharing Redis',
    async () => {
      const env = { RATE_LIMIT_REDIS_URL: valkey.url, RATE_LIMIT_ON_STORE_ERROR: 'deny' };
      const [a, b] = await Promise.all([gateway(env), gateway(env)]);
      return [a!.url, b!.url];
    },
  ],
  [
    'two listener threads of one process',
    async () => {
      // Threads share a port only when it is fixed; on PORT=0 the gateway serves from one.
      const port = String(await freePort());
      const started = await gateway({ GATEWAY_THREADS: '2', HTTP_ENGINE: 'uws', PORT: port });
      await waitFor(() => started.lines.some((line) => /serving from 2 listener threads/.test(line)), {
        what: 'the gateway to serve from two listener threads',
        timeoutMs: 30_000,
      });
      return [started.url];
    },
  ],
];

for (const [name, start] of setups) {
  describe(name, () => {
    let urls: string[];
    before(async () => {
      urls = await start();
    });

    test('sixty requests at once admit exactly a burst of 20; every refusal says so truthfully', async () => {
      const { key } = mint({ rate: { count: 1, per: 'min' }, burst: 20 });
      const answers = await race(urls, key, 60);
      assert.equal(answers.filter((answer) => answer.status === 200).length, 20);
      // 1/min with a burst of 20 refills in 1,200 s; the next request comes within a minute.
      for (const refused of answers.filter((answer) => answer.status !== 200))
        assert.ok(checkRefusal(refused, 20, 1200) <= 60);
    });

    test('a budget big enough to be leased: a flood in waves never admits more than the bucket held', async () => {
      // 1,280 is ten requests a lease per process (five per thread); 1/min refills at most one meanwhile.
      const { key } = mint({ rate: { count: 1, per: 'min' }, burst: 1280 });
      let ok = 0;
      for (let wave = 0; wave < 27; wave++)
        ok += (await race(urls, key, 50)).filter((answer) => answer.status === 200).length;
      assert.ok(ok <= 1281, `admitted ${ok} of a bucket of 1,280`);
      // Leases only move when a request counts: the processes may hold back what they leased, no more.
      assert.ok(ok >= 1280 - 2 * 15, `admitted only ${ok} of a bucket of 1,280`);
    });

    test('a flood of refusals spends nothing: the request after Retry-After is admitted', async () => {
      const { key } = mint({ rate: { count: 1, per: 's' }, burst: 2 });
      const spent = await race(urls, key, 2);
      assert.deepEqual(
        spent.map((answer) => answer.status),
        [200, 200],
      );
      const refused = await race(urls, key, 30);
      const waits = refused.map((answer) => checkRefusal(answer, 2, 2));
      // Were refusals counted, thirty of them at 1/s would push the next admission 30 s out.
      await elapse(Math.max(...waits) * 1000);
      assert.equal((await send(urls[0]!, key, 'tools/list')).status, 200);
    });

    test('forty tool calls at once spend a daily quota of 10 exactly, and the refused ones count nothing', async () => {
      const { key, id } = mint({ quotas: { event: 10 } });
      const answers = await race(urls, key, 40, 'tools/call', { name: 'event_topics', arguments: {} });
      assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [200]);
      const refused = answers.filter((answer) => answer.text.includes('[quota_exceeded]'));
      assert.equal(refused.length, 30);
      assert.deepEqual(await usage(id), { event: 10 });
    });

    test('calls refused before their tool runs (forbidden, malformed, unknown) spend no quota', async () => {
      const readOnly = mintKeyWith({ quotas: { event: 5 } }, true);
      const create = { name: 'event_create_topic', arguments: { topic: `t-${randomUUID()}` } };
      for (const answer of await race(urls, readOnly.key, 4, 'tools/call', create))
        assert.match(answer.text, /lacks the scope read-write/);
      assert.deepEqual(await usage(readOnly.id), {});

      const { key, id } = mint({ quotas: { event: 5 } });
      await race(urls, key, 3, 'tools/call', { name: 'event_publish', arguments: { value: 1 } });
      await race(urls, key, 3, 'tools/call', { name: 'no_such_tool', arguments: {} });
      assert.deepEqual(await usage(id), {});
      // The counter itself works: one call that reaches its tool counts once.
      await send(urls[0]!, key, 'tools/call', { name: 'event_topics', arguments: {} });
      assert.deepEqual(await usage(id), { event: 1 });
    });
  });
}
