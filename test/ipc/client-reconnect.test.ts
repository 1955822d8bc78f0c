/**
 * The real client against a real (unconfigured, so no Kafka needed) broker-worker process:
 * a worker that is down fails calls fast with WORKER_UNREACHABLE, and the client comes back
 * by itself when the worker does. Also the worker's side of the protocol rules.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import { parseEndpoint } from '../../shared/ipc/endpoint.ts';
import { encodeFrame } from '../../shared/ipc/frame-codec.ts';
import {
  clientFor,
  freshSocketAddress,
  startWorker,
  type WorkerProcess,
} from '../broker-worker/support/worker-process.ts';
import { waitFor } from '../support/harness.ts';

const stops: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function worker(env: Record<string, string> = {}, address?: string): Promise<WorkerProcess> {
  const w = await startWorker(env, address ? { address } : {});
  stops.push(() => w.kill());
  return w;
}

function unreachable(error: unknown): boolean {
  return (
    error instanceof WorkerCallError &&
    error.code === 'WORKER_UNREACHABLE' &&
    /unreachable/.test(error.message)
  );
}

function cutOff(error: unknown): boolean {
  return (
    error instanceof WorkerCallError &&
    error.code === 'WORKER_UNREACHABLE' &&
    /broke during the call/.test(error.message)
  );
}

describe('gateway client and a broker worker process', () => {
  it('fails fast with WORKER_UNREACHABLE when no worker ever ran', async () => {
    const client = clientFor(freshSocketAddress());
    stops.push(() => client.close());
    // A long budget: answering WORKER_UNREACHABLE (not DEADLINE_EXCEEDED) shows the call did not wait it out.
    await assert.rejects(client.call('status', {}, { timeoutMs: 60_000 }), (e: unknown) => {
      assert.ok(unreachable(e), String(e));
      assert.match((e as Error).message, /npm run broker-worker/);
      return true;
    });
    assert.equal(client.isConnected(), false);
  });

  it('fails calls within about a second while the worker is down and recovers when it is back', async () => {
    const address = freshSocketAddress();
    const first = await worker({}, address);
    const client = clientFor(address);
    stops.push(() => client.close());
    const status = await client.call('status', {}, { timeoutMs: 2000 });
    assert.equal(status.configured, false);
    assert.equal(client.isConnected(), true);

    await first.kill();
    assert.ok(existsSync(address.slice('unix:'.length)), 'a killed worker leaves its socket file behind');
    // On a loaded machine the first call can leave before the client has seen the socket close;
    // it then fails as a call the broken connection cut off. Every later call finds the link down.
    await assert.rejects(
      client.call('status', {}, { timeoutMs: 60_000 }),
      (e: unknown) => unreachable(e) || cutOff(e),
      'call 0',
    );
    for (let i = 1; i < 3; i += 1) {
      await assert.rejects(client.call('status', {}, { timeoutMs: 60_000 }), unreachable, `call ${i}`);
    }
    assert.equal(client.isConnected(), false);

    // The new worker removes the stale socket file and the client reconnects on its own.
    const second = await worker({}, address);
    const recovered = await waitFor(
      () =>
        client.call('status', {}, { timeoutMs: 2000 }).then(
          () => true,
          () => false,
        ),
      { what: 'the client to reconnect to the new worker', timeoutMs: 5000, intervalMs: 100 },
    );
    assert.ok(recovered, 'client did not reconnect');
    assert.equal(client.state()[0]?.workerId?.endsWith(String(second.child.pid)), true);
  });

  it('refuses to start a second worker on a socket that is in use', async () => {
    const first = await worker();
    await assert.rejects(startWorker({}, { address: first.address, timeoutMs: 10_000 }), /already listening/);
  });

  it('listens on TCP when BROKER_WORKER_LISTEN says tcp:', async () => {
    const w = await worker({ BROKER_WORKER_LISTEN: 'tcp:127.0.0.1:0' });
    const line = w.lines.find((l) => l.includes('"broker worker listening"'))!;
    const port = (JSON.parse(line) as { port: number }).port;
    const client = clientFor(`tcp:127.0.0.1:${port}`);
    stops.push(() => client.close());
    assert.equal((await client.call('status', {}, { timeoutMs: 2000 })).configured, false);
  });

  it('admits only gateways that present BROKER_WORKER_TOKEN when it is set', async () => {
    const w = await worker({ BROKER_WORKER_TOKEN: 'tok-7f1c' });
    const endpoints = [parseEndpoint(w.address)];
    const without = new BrokerWorkerClient({ workers: endpoints });
    const wrong = new BrokerWorkerClient({ workers: endpoints, link: { token: 'tok-0000' } });
    const right = BrokerWorkerClient.fromEnv({ BROKER_WORKERS: w.address, BROKER_WORKER_TOKEN: 'tok-7f1c' });
    stops.push(
      () => without.close(),
      () => wrong.close(),
      () => right.close(),
    );
    for (const client of [without, wrong]) {
      await assert.rejects(client.call('status', {}, { timeoutMs: 2000 }), (e: unknown) => {
        assert.ok(unreachable(e), String(e));
        assert.match((e as Error).message, /BROKER_WORKER_TOKEN/);
        return true;
      });
    }
    assert.equal((await right.call('status', {}, { timeoutMs: 2000 })).configured, false);
    assert.equal(
      w.lines.some((line) => line.includes('tok-7f1c')),
      false,
    );
  });

  it('closes a link that sends garbage, a request before hello, or an oversized frame', async () => {
    const w = await worker();
    const path = w.address.slice('unix:'.length);
    const closedAfter = (bytes: Buffer) =>
      new Promise<boolean>((resolve) => {
        const socket = connect(path, () => socket.write(bytes));
        socket.on('data', () => {});
        socket.on('close', () => resolve(true));
        socket.on('error', () => {});
        setTimeout(() => {
          socket.destroy();
          resolve(false);
        }, 2000);
      });
    assert.equal(await closedAfter(Buffer.from([0, 0, 0, 2, 0xc1, 0xc1])), true, 'garbage');
    assert.equal(
      await closedAfter(encodeFrame({ t: 'req', id: 1, method: 'status', params: {}, deadlineMs: 100 })),
      true,
      'request before hello',
    );
    assert.equal(await closedAfter(Buffer.from([0xff, 0xff, 0xff, 0xff])), true, 'oversized');
    // And the worker still serves well-behaved clients.
    const client = clientFor(w.address);
    stops.push(() => client.close());
    assert.equal((await client.call('status', {}, { timeoutMs: 2000 })).configured, false);
  });
});
