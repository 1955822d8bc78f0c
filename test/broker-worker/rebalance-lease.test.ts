/**
 * A rebalance while a poll's lease is open: a second worker joins the group and takes one
 * of the partitions the first worker had handed out under a lease. The new owner hands
 * that partition's messages out again (a duplicate the contract allows after a
 * rebalance); the first worker's late acknowledgement commits only the partition it kept,
 * never the moved one past what its new owner has delivered. Real worker processes, real
 * Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumedMessage, ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, groupOffsets, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
const env = { BROKER_BOOTSTRAP_SERVERS: kafka.plaintext, BROKER_SECURITY_PROTOCOL: 'PLAINTEXT' };
let first: WorkerProcess;
let second: WorkerProcess;
let one: BrokerWorkerClient;
let two: BrokerWorkerClient;

before(async () => {
  [first, second] = await Promise.all([startWorker(env), startWorker(env)]);
  one = clientFor(first.address);
  two = clientFor(second.address);
});
after(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await Promise.all([first?.stop(), second?.stop()]);
});

function poll(client: BrokerWorkerClient, params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 100, timeout_ms: 3000, ...params };
  return client.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

function settle(client: BrokerWorkerClient, params: { commit?: string[]; rewind?: string[] }) {
  return client.call('settle', { commit: [], rewind: [], ...params }, { timeoutMs: 10_000 });
}

/** Polls until `count` messages came (or the rounds ran out); returns them and their leases. */
async function take(
  client: BrokerWorkerClient,
  q: { topic: string; group: string },
  count: number,
): Promise<{ messages: ConsumedMessage[]; leases: string[] }> {
  const messages: ConsumedMessage[] = [];
  const leases: string[] = [];
  // The group may be rebalancing for the first rounds.
  for (let round = 0; round < 10 && messages.length < count; round++) {
    const answer = await poll(client, q);
    messages.push(...answer.messages);
    if (answer.lease) leases.push(answer.lease);
  }
  return { messages, leases };
}

const valuesOf = (messages: ConsumedMessage[], partition: number) =>
  messages.filter((m) => m.partition === partition).map((m) => m.value);

it('a partition that moves while leased is committed only by its new owner, after delivery', async () => {
  const topic = uniqueName('rebalance');
  const group = uniqueName('rebalance-group');
  await createTopic(kafka.plaintext, topic, 2);
  const perPartition = new Map<number, number>();
  for (let i = 0; i < 20; i++) {
    const written = await one.call('publish', { topic, key: `k${i}`, value: `m${i}` }, { timeoutMs: 15_000 });
    perPartition.set(written.partition, (perPartition.get(written.partition) ?? 0) + 1);
  }
  assert.equal(perPartition.size, 2, 'the keys should spread over both partitions');

  // The first worker is alone in the group: it hands out both partitions, unacknowledged.
  const held = await take(one, { topic, group }, 20);
  assert.equal(held.messages.length, 20);

  // The second worker joins: one partition moves to it and is read again from the start.
  const moved = await take(two, { topic, group }, 1);
  const movedPartition = moved.messages[0]!.partition;
  const keptPartition = 1 - movedPartition;
  const again = await take(two, { topic, group }, perPartition.get(movedPartition)! - moved.messages.length);
  const redelivered = [...moved.messages, ...again.messages];
  assert.deepEqual(valuesOf(redelivered, movedPartition), valuesOf(held.messages, movedPartition));
  assert.equal(valuesOf(redelivered, keptPartition).length, 0);

  // The first worker's answers were delivered after all: only the kept partition moves on.
  await settle(one, { commit: held.leases });
  const afterFirst = await groupOffsets(kafka.plaintext, group, topic);
  assert.equal(afterFirst[keptPartition], String(perPartition.get(keptPartition)));
  assert.equal(afterFirst[movedPartition], '-1', 'the moved partition was committed by its old owner');

  // The new owner's answers never reached their caller: handed out again, then committed.
  const leases = [...moved.leases, ...again.leases];
  await settle(two, { rewind: leases });
  const third = await take(two, { topic, group }, perPartition.get(movedPartition)!);
  assert.deepEqual(valuesOf(third.messages, movedPartition), valuesOf(held.messages, movedPartition));
  await settle(two, { commit: third.leases });
  assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), {
    0: String(perPartition.get(0)),
    1: String(perPartition.get(1)),
  });
});
