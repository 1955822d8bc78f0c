/**
 * Settling across gateways and worker restarts: two gateways on one worker never commit
 * past each other's open leases, and a gateway that goes away hands its leases to the
 * other; a worker restarted between an answer and its acknowledgement hands that answer
 * out again rather than lose it. Real worker processes, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, groupOffsets, produce, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
const env = { BROKER_BOOTSTRAP_SERVERS: kafka.plaintext, BROKER_SECURITY_PROTOCOL: 'PLAINTEXT' };
let worker: WorkerProcess;

before(async () => {
  worker = await startWorker(env);
});
after(() => worker?.stop());

function poll(client: BrokerWorkerClient, params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 2, timeout_ms: 3000, ...params };
  return client.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

function settle(client: BrokerWorkerClient, params: { commit?: string[]; rewind?: string[] }) {
  return client.call('settle', { commit: [], rewind: [], ...params }, { timeoutMs: 10_000 });
}

async function queue(values: string[]): Promise<{ topic: string; group: string }> {
  const topic = uniqueName('settle');
  await createTopic(kafka.plaintext, topic, 1);
  await produce(
    kafka.plaintext,
    topic,
    values.map((value) => ({ value })),
  );
  return { topic, group: uniqueName('settle-group') };
}

const values = (r: { messages: Array<{ value: string | null }> }) => r.messages.map((m) => m.value);

it("two gateways on one worker: neither commits past the other's open lease", async () => {
  const q = await queue(['a', 'b', 'c', 'd']);
  const gatewayA = clientFor(worker.address);
  const gatewayB = clientFor(worker.address);
  try {
    const heldByA = await poll(gatewayA, q);
    assert.deepEqual(values(heldByA), ['a', 'b']);
    const heldByB = await poll(gatewayB, q);
    assert.deepEqual(values(heldByB), ['c', 'd']);
    assert.deepEqual(await settle(gatewayB, { commit: [heldByB.lease!] }), { settled: 1, unknown: 0 });
    // B's acknowledgement may commit up to A's lease (offset 0), never past it.
    assert.ok(Number((await groupOffsets(kafka.plaintext, q.group, q.topic))[0]) <= 0);

    // Gateway A goes away without acknowledging: its lease comes back for gateway B.
    await gatewayA.close();
    const again = await poll(gatewayB, q);
    assert.deepEqual(values(again), ['a', 'b']);
    await settle(gatewayB, { commit: [again.lease!] });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '4' });
    assert.equal((await poll(gatewayB, { ...q, timeout_ms: 300 })).count, 0);
  } finally {
    await gatewayA.close();
    await gatewayB.close();
  }
});

it('a worker restarted between an answer and its acknowledgement hands the answer out again', async () => {
  const q = await queue(['x', 'y']);
  const gateway = clientFor(worker.address);
  try {
    const answered = await poll(gateway, q);
    assert.deepEqual(values(answered), ['x', 'y']);
    // Stopped with the lease open: the worker waits a moment for it, then leaves its group.
    await worker.stop();
    worker = await startWorker(env, { address: worker.address });
    assert.deepEqual(await settle(gateway, { commit: [answered.lease!] }), { settled: 0, unknown: 1 });
    assert.ok(Number((await groupOffsets(kafka.plaintext, q.group, q.topic))[0]) <= 0);
    let again = await poll(gateway, q);
    // The restarted worker's consumer may still be joining the group for its first poll.
    for (let round = 0; round < 5 && again.count === 0; round++) again = await poll(gateway, q);
    assert.deepEqual(values(again), ['x', 'y']);
    await settle(gateway, { commit: [again.lease!] });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '2' });
  } finally {
    await gateway.close();
  }
});
