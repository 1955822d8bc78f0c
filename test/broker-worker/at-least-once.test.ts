/**
 * At-least-once group consumption, against the real local Kafka through a real worker
 * process: a poll's messages are committed only when the gateway reports its answer
 * delivered, and handed out again when the answer was not written, was never
 * acknowledged, or its gateway link closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { groupOffsets, produce, uniqueName } from './support/kafka.ts';
import {
  type ConnectedWorker,
  clientFor,
  startConnectedWorker,
  type WorkerProcess,
} from './support/worker-process.ts';

const kafka = testKafka();
const ACK_TIMEOUT_MS = 2000;

let connected: ConnectedWorker;
let worker: WorkerProcess;
let client: BrokerWorkerClient;

before(async () => {
  connected = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_CONSUME_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS),
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  ({ worker, client } = connected);
});
after(() => connected?.close());

function poll(c: BrokerWorkerClient, params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 5000, ...params };
  return c.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

function settle(c: BrokerWorkerClient, params: { commit?: string[]; rewind?: string[] }) {
  return c.call('settle', { commit: [], rewind: [], ...params }, { timeoutMs: 10_000 });
}

/** A one-partition topic holding `values`, read by a fresh group. */
async function queue(values: string[]): Promise<{ topic: string; group: string }> {
  const topic = uniqueName('alo');
  await client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, { timeoutMs: 15_000 });
  if (values.length > 0)
    await produce(
      kafka.plaintext,
      topic,
      values.map((value) => ({ value })),
    );
  return { topic, group: uniqueName('alo-group') };
}

const values = (r: { messages: Array<{ value: string | null }> }) => r.messages.map((m) => m.value);

describe('at-least-once group consumption', () => {
  it('an immediately repeated poll returns only new messages while the first answer is unacknowledged', async () => {
    const q = await queue(['a', 'b', 'c']);
    const first = await poll(client, { ...q, max: 3 });
    assert.deepEqual(values(first), ['a', 'b', 'c']);
    assert.ok(first.lease, 'a poll that hands out messages carries a lease');
    assert.equal((await poll(client, { ...q, timeout_ms: 300 })).count, 0);
    await produce(kafka.plaintext, q.topic, [{ value: 'd' }]);
    const second = await poll(client, q);
    assert.deepEqual(values(second), ['d']);
    await settle(client, { commit: [second.lease!] });
    // The later answer is acknowledged, the earlier one is not: nothing may be committed past it.
    assert.ok(Number((await groupOffsets(kafka.plaintext, q.group, q.topic))[0]) <= 0);
    assert.deepEqual(await settle(client, { commit: [first.lease!] }), { settled: 1, unknown: 0 });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '4' });
  });

  it('an answer that could not be written to its caller (rewind) is handed out again, then committed', async () => {
    const q = await queue(['a', 'b']);
    const lost = await poll(client, { ...q, max: 2 });
    assert.deepEqual(values(lost), ['a', 'b']);
    assert.deepEqual(await settle(client, { rewind: [lost.lease!] }), { settled: 1, unknown: 0 });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '-1' });
    const again = await poll(client, { ...q, max: 2 });
    assert.deepEqual(
      again.messages.map((m) => m.offset),
      lost.messages.map((m) => m.offset),
    );
    await settle(client, { commit: [again.lease!] });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '2' });
    // A settle for a lease already settled changes nothing.
    assert.deepEqual(await settle(client, { commit: [lost.lease!] }), { settled: 0, unknown: 1 });
    assert.equal((await poll(client, { ...q, timeout_ms: 300 })).count, 0);
  });

  it('an answer never acknowledged is handed out again after the ack timeout', async () => {
    const q = await queue(['x']);
    const unacked = await poll(client, q);
    assert.deepEqual(values(unacked), ['x']);
    // Waits for the ack timeout (2 s here); the poll's own budget is three times that.
    const again = await poll(client, { ...q, timeout_ms: 3 * ACK_TIMEOUT_MS });
    assert.deepEqual(values(again), ['x']);
    assert.equal(again.messages[0]!.offset, unacked.messages[0]!.offset);
    assert.deepEqual(await settle(client, { commit: [unacked.lease!] }), { settled: 0, unknown: 1 });
    await settle(client, { commit: [again.lease!] });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '1' });
  });

  it('an answer whose gateway link closed before acknowledging is handed out again', async () => {
    const q = await queue(['p', 'q']);
    const other = clientFor(worker.address);
    const orphan = await poll(other, { ...q, max: 2 });
    assert.deepEqual(values(orphan), ['p', 'q']);
    await other.close();
    const again = await poll(client, { ...q, max: 2 });
    assert.deepEqual(values(again), ['p', 'q']);
    await settle(client, { commit: [again.lease!] });
    assert.deepEqual(await groupOffsets(kafka.plaintext, q.group, q.topic), { 0: '2' });
  });
});
