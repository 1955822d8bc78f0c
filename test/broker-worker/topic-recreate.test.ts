/**
 * A topic deleted and created again under the same name starts over at offset 0. Nothing
 * a group consumer held from the old topic may move the group past the new topic's
 * messages: not the old poll's late acknowledgement, not the fetch position the consumer
 * had reached. Real worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { groupOffsets, produce, uniqueName } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
let connected: ConnectedWorker;
let client: BrokerWorkerClient;

before(async () => {
  connected = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  ({ client } = connected);
});
after(() => connected?.close());

function poll(params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 3000, ...params };
  return client.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

function settle(params: { commit?: string[]; rewind?: string[] }) {
  return client.call('settle', { commit: [], rewind: [], ...params }, { timeoutMs: 10_000 });
}

function create(topic: string) {
  return client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, { timeoutMs: 15_000 });
}

/** Polls (acknowledging each answer) until `count` messages came or the rounds ran out. */
async function drain(topic: string, group: string, count: number): Promise<string[]> {
  const got: string[] = [];
  // A few polls: the group may still be joining its new consumer for the first of them.
  for (let round = 0; round < 5 && got.length < count; round++) {
    const answer = await poll({ topic, group });
    got.push(...answer.messages.map((m) => m.value ?? ''));
    if (answer.lease) await settle({ commit: [answer.lease] });
  }
  return got;
}

async function recreateWith(topic: string, values: string[]): Promise<void> {
  await client.call('deleteTopic', { topic }, { timeoutMs: 15_000 });
  await create(topic);
  for (const value of values)
    assert.equal((await client.call('publish', { topic, value }, { timeoutMs: 15_000 })).topic, topic);
}

it('a group polling a topic that is deleted and created again gets every message of the new topic', async () => {
  const topic = uniqueName('recreate');
  const group = uniqueName('recreate-group');
  await create(topic);
  await produce(
    kafka.plaintext,
    topic,
    ['old-1', 'old-2', 'old-3'].map((value) => ({ value })),
  );
  // Handed out and not yet acknowledged when the topic goes: the consumer is busy.
  const old = await poll({ topic, group, max: 3 });
  assert.deepEqual(
    old.messages.map((m) => m.value),
    ['old-1', 'old-2', 'old-3'],
  );

  await recreateWith(topic, ['new-1', 'new-2', 'new-3']);

  // The old answer's acknowledgement comes late: it belongs to a topic that is gone.
  assert.deepEqual(await settle({ commit: [old.lease!] }), { settled: 0, unknown: 1 });
  assert.notEqual(
    (await groupOffsets(kafka.plaintext, group, topic))[0],
    '3',
    "the old topic's offset was committed for the new one",
  );

  assert.deepEqual(await drain(topic, group, 3), ['new-1', 'new-2', 'new-3']);
  assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), { 0: '3' });
});

it('a poll waiting while its topic is deleted and created again does not keep the old position', async () => {
  const topic = uniqueName('recreate');
  const group = uniqueName('recreate-group');
  await create(topic);
  await produce(
    kafka.plaintext,
    topic,
    ['old-1', 'old-2'].map((value) => ({ value })),
  );
  assert.deepEqual(await drain(topic, group, 2), ['old-1', 'old-2']);
  // Everything was acknowledged; this poll waits for more, so the consumer is busy.
  const waiting = poll({ topic, group, timeout_ms: 5000 });
  await recreateWith(topic, ['new-1', 'new-2', 'new-3']);
  const answered = await waiting;
  if (answered.lease) await settle({ commit: [answered.lease] });
  const got = [...answered.messages.map((m) => m.value ?? ''), ...(await drain(topic, group, 3))];
  assert.deepEqual(got, ['new-1', 'new-2', 'new-3']);
  assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), { 0: '3' });
});
