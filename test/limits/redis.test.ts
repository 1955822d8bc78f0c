/**
 * RATE_LIMIT_REDIS_URL: two real gateway processes sharing one real Valkey server hold a
 * key to one budget, small or big enough to be leased; with the server killed, `allow`
 * keeps serving on each process's own limit and `deny` answers 503; both recover on their
 * own when it returns.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startValkey, type ValkeyServer } from '../../dev/valkey/valkey.ts';
import type { KeyLimits } from '../../gateway/core/key-limits.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { freePort, mintKey, waitFor } from '../support/harness.ts';

let dataDir: string;
let valkey: ValkeyServer;
let port: number;
const gateways: GatewayProcess[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-limit-redis-'));
  port = await freePort();
  valkey = await startValkey(port);
});
after(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await valkey?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

function mint(limits: KeyLimits): string {
  return mintKey(dataDir, 'redis', null, { limits }).key;
}

async function gateway(onStoreError: 'allow' | 'deny'): Promise<GatewayProcess> {
  const started = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    RATE_LIMIT_REDIS_URL: valkey.url,
    RATE_LIMIT_ON_STORE_ERROR: onStoreError,
    API_KEY_CACHE_TTL_MS: '0',
  });
  gateways.push(started);
  return started;
}

async function send(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await response.arrayBuffer();
  return response.status;
}

test('two processes, one Redis: one budget; Redis killed: allow and deny; Redis back: shared again', async () => {
  const [a, b] = [await gateway('allow'), await gateway('allow')];
  const budget = 20;
  const key = mint({ rate: { count: 1, per: 'min' }, burst: budget });
  const statuses: number[] = [];
  for (let i = 0; i < budget * 2; i++) statuses.push(await send((i % 2 === 0 ? a : b).url, key));
  const ok = statuses.filter((status) => status === 200).length;
  assert.ok(ok >= budget && ok <= budget * 1.1, `admitted ${ok} of ${budget} across two processes`);

  // A budget big enough to be leased (10 requests per lease): still one budget for both.
  const leased = 1280;
  const big = mint({ rate: { count: 1, per: 'min' }, burst: leased });
  let bigOk = 0;
  for (let i = 0; i < 700; i++) {
    const pair = await Promise.all([send(a.url, big), send(b.url, big)]);
    bigOk += pair.filter((status) => status === 200).length;
  }
  assert.ok(bigOk >= leased && bigOk <= leased * 1.1, `admitted ${bigOk} of ${leased} with leases`);

  const deny = await gateway('deny');
  const small = mint({ rate: { count: 1, per: 'min' }, burst: 3 });
  await valkey.kill();
  // allow: served on the process's own limit (its own bucket of 3), with one warning line.
  const local: number[] = [];
  for (let i = 0; i < 5; i++) local.push(await send(a.url, small));
  assert.deepEqual(local, [200, 200, 200, 429, 429]);
  assert.equal(a.lines.filter((line) => line.includes('rate-limit store unreachable')).length, 1);
  // deny: 503 with a clear error while the store is away.
  const refused = await fetch(`${deny.url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': small },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(refused.status, 503);
  assert.match(
    ((await refused.json()) as { error: { message: string } }).error.message,
    /RATE_LIMIT_ON_STORE_ERROR=deny/,
  );

  valkey = await startValkey(port);
  const fresh = mint({ rate: { count: 1, per: 'min' }, burst: 4 });
  // The client reconnects after its back-off: retry until deny admits again (Redis decides).
  const status = await waitFor(
    async () => {
      const answer = await send(deny.url, fresh);
      return answer === 503 ? undefined : answer;
    },
    {
      what: 'the deny gateway to answer other than 503 once Valkey is back',
      timeoutMs: 15_000,
      intervalMs: 50,
    },
  );
  assert.equal(status, 200);
  const probe = mint({ rate: { count: 1000, per: 's' } });
  await waitFor(
    async () => {
      if (a.lines.some((line) => line.includes('reachable again'))) return true;
      await send(a.url, probe);
      return false;
    },
    { what: 'gateway a to log that Valkey is reachable again', timeoutMs: 15_000, intervalMs: 50 },
  );
  // Shared again: the three processes together admit the rest of fresh's budget of 4.
  const shared: number[] = [];
  for (const gw of [a, b, deny, a, b]) shared.push(await send(gw.url, fresh));
  assert.equal(shared.filter((s) => s === 200).length, 3, shared.join(','));
});
