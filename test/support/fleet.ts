/**
 * A fleet on real engines, as docs/deployment.md runs one: two broker workers listening on
 * TCP with a shared token, and two gateways, each reaching both workers. One consumer group
 * polled through both gateways lives in the one worker its name hashes to. Workers can be
 * killed with -9 and started again on the same address; Kafka brokers are the caller's.
 */
import { randomBytes } from 'node:crypto';
import { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { startWorker, type WorkerProcess } from '../broker-worker/support/worker-process.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';
import { freePort } from './harness.ts';

export interface Fleet {
  gateways: TestGateway[];
  /** The worker processes, by index; a killed one is replaced by restartWorker. */
  workers: WorkerProcess[];
  /** Workers killed and replaced, oldest first (their output stays readable). */
  replaced: WorkerProcess[];
  addresses: string[];
  /** Index of the worker that serves `group`, as every gateway routes it. */
  ownerOf(group: string): number;
  /** What `worker` has handed out and not committed, and of that what is under open leases (its status). */
  uncommitted(worker: number): Promise<{ uncommitted: number; leased: number }>;
  killWorker(worker: number): Promise<void>;
  restartWorker(worker: number): Promise<void>;
  /** A tools/call through gateway `gateway`: its structured result, or the error text. */
  call<T>(gateway: number, name: string, args: Record<string, unknown>): Promise<CallOutcome<T>>;
  close(): Promise<void>;
}

export type CallOutcome<T> = { ok: true; data: T } | { ok: false; error: string };

/**
 * `workerEnv` joins the fleet's own settings (bootstrap list, TCP listener, token); the
 * session and ack timeouts default to what FLEET.md measured with (6 s and 5 s).
 */
export async function startFleet(bootstrap: string, workerEnv: Record<string, string> = {}): Promise<Fleet> {
  const token = randomBytes(12).toString('hex');
  const addresses = [`tcp:127.0.0.1:${await freePort()}`, `tcp:127.0.0.1:${await freePort()}`];
  const env = {
    BROKER_BOOTSTRAP_SERVERS: bootstrap,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_WORKER_TOKEN: token,
    BROKER_SESSION_TIMEOUT_MS: '6000',
    BROKER_CONSUME_ACK_TIMEOUT_MS: '5000',
    // Readiness is read from the worker's info-level 'listening' line.
    LOG_LEVEL: 'info',
    ...workerEnv,
  };
  const workers = await Promise.all(addresses.map((address) => startWorker(env, { address })));
  const clientEnv = { BROKER_WORKERS: addresses.join(','), BROKER_WORKER_TOKEN: token };
  const clients = [BrokerWorkerClient.fromEnv(clientEnv), BrokerWorkerClient.fromEnv(clientEnv)];
  const gateways = await Promise.all(clients.map((broker) => startTestGateway({ broker })));
  // A status call needs a link of its own: gateways route calls without a group anywhere.
  const statusClients = addresses.map((address) =>
    BrokerWorkerClient.fromEnv({ BROKER_WORKERS: address, BROKER_WORKER_TOKEN: token }),
  );

  const fleet: Fleet = {
    gateways,
    workers,
    replaced: [],
    addresses,
    ownerOf(group) {
      return addresses.indexOf(clients[0]!.workerFor(group));
    },
    async uncommitted(worker) {
      const status = await statusClients[worker]!.call('status', {}, { timeoutMs: 2000 });
      return { uncommitted: status.uncommittedMessages ?? 0, leased: status.leasedMessages ?? 0 };
    },
    async killWorker(worker) {
      await workers[worker]!.kill();
    },
    async restartWorker(worker) {
      fleet.replaced.push(workers[worker]!);
      workers[worker] = await startWorker(env, { address: addresses[worker]! });
    },
    async call<T>(gateway: number, name: string, args: Record<string, unknown>): Promise<CallOutcome<T>> {
      const gw = gateways[gateway]!;
      try {
        const response = await fetch(`${gw.url}/event/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'x-api-key': gw.apiKey,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name, arguments: args },
          }),
        });
        const body = (await response.json()) as {
          result?: { isError?: boolean; structuredContent?: T; content?: Array<{ text: string }> };
          error?: { message: string };
        };
        if (body.result && !body.result.isError)
          return { ok: true, data: body.result.structuredContent as T };
        return {
          ok: false,
          error: body.error?.message ?? body.result?.content?.[0]?.text ?? `HTTP ${response.status}`,
        };
      } catch (error) {
        return { ok: false, error: (error as Error).message };
      }
    },
    async close() {
      await Promise.all(gateways.map((gw) => gw.close()));
      await Promise.all([...clients, ...statusClients].map((client) => client.close()));
      await Promise.all(workers.map((worker) => worker.stop()));
    },
  };
  return fleet;
}
