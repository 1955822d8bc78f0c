/**
 * Redis that stops answering without closing the connection (a network partition, a hung
 * server) rather than one that is gone: a real Valkey behind a TCP relay that can swallow
 * every byte. With RATE_LIMIT_ON_STORE_ERROR=deny the gateway must answer 503 instead of
 * hanging, readiness must say Redis is down, and once the relay passes bytes again the
 * limits are Redis's again, with the budget Redis kept through the partition.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, test } from 'node:test';
import { startValkey, type ValkeyServer } from '../../dev/valkey/valkey.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freePort, waitFor } from '../support/harness.ts';

/** A TCP relay to Valkey; while `partitioned`, bytes either way are dropped and sockets stay open. */
class Relay {
  partitioned = false;
  private readonly sockets = new Set<Socket>();
  constructor(readonly server: Server) {}

  static async start(target: number): Promise<Relay> {
    const server = createServer();
    const relay = new Relay(server);
    server.on('connection', (client) => {
      const upstream = tcpConnect({ host: '127.0.0.1', port: target });
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        relay.sockets.add(from);
        from.on('data', (chunk) => {
          if (!relay.partitioned) to.write(chunk);
        });
        from.on('error', () => to.destroy());
        from.on('close', () => {
          relay.sockets.delete(from);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get url(): string {
    const address = this.server.address();
    return `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let valkey: ValkeyServer;
let relay: Relay;
let gw: TestGateway;

before(async () => {
  valkey = await startValkey(await freePort());
  relay = await Relay.start(valkey.port);
  gw = await startTestGateway({
    env: { RATE_LIMIT_REDIS_URL: relay.url, RATE_LIMIT_ON_STORE_ERROR: 'deny' },
  });
});
after(async () => {
  await gw?.close();
  await relay?.close();
  await valkey?.stop();
});

async function send(key: string): Promise<number> {
  const response = await fetch(`${gw.url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'tools/list' }),
  });
  await response.arrayBuffer();
  return response.status;
}

function mint(burst: number): string {
  return gw.withStore((store) =>
    store.create('partition', null, { limits: { rate: { count: 1, per: 'min' }, burst } }),
  ).key;
}

test('a partitioned Redis is answered with 503 and a failed readiness check, and the shared budget survives it', async () => {
  const spent = mint(2);
  assert.deepEqual([await send(spent), await send(spent), await send(spent)], [200, 200, 429]);
  assert.equal((await gw.gateway.readiness()).checks.redis?.ok, true);

  relay.partitioned = true;
  const fresh = mint(3);
  // Answered (not held until the client gives up) and refused as deny says.
  assert.equal(await send(fresh), 503);
  assert.equal((await gw.gateway.readiness()).checks.redis?.ok, false);

  relay.partitioned = false;
  // The client reconnects after its back-off; the first answer other than 503 is Redis's grant.
  const first = await waitFor(
    async () => {
      const status = await send(fresh);
      return status === 503 ? undefined : status;
    },
    { what: 'an answer other than 503 after the partition', timeoutMs: 15_000, intervalMs: 50 },
  );
  assert.equal(first, 200);
  // Nothing the partition refused was counted: fresh has two of its three left, then none.
  assert.deepEqual([await send(fresh), await send(fresh), await send(fresh)], [200, 200, 429]);
  // What Redis counted before the partition still holds.
  assert.equal(await send(spent), 429);
  assert.equal((await gw.gateway.readiness()).checks.redis?.ok, true);
});
