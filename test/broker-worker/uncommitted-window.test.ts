/**
 * The uncommitted window (BROKER_CONSUME_UNCOMMITTED_MAX, decision 0401), on the real local
 * Kafka through a real worker process: a group consumer never has more messages handed out
 * and uncommitted than the window, whatever is waiting, and a poll blocked by it goes on
 * as soon as a commit frees room. A worker that dies therefore delivers at most the window
 * again.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { groupOffsets, produce, uniqueName } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
const WINDOW = 100;
let connected: ConnectedWorker;
let client: BrokerWorkerClient;

before(async () => {
  connected = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
    BROKER_CONSUME_UNCOMMITTED_MAX: String(WINDOW),
  });
  ({ client } = connected);
});
after(() => connected?.close());

function poll(params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 30, timeout_ms: 5000, ...params };
  return client.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

const status = () => client.call('status', {}, { timeoutMs: 2000 });

it('polls stop at the window while leases are open, and go on once a commit frees room', async () => {
  const topic = uniqueName('window');
  const group = uniqueName('window-group');
  await client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, { timeoutMs: 15_000 });
  await produce(
    kafka.plaintext,
    topic,
    Array.from({ length: 150 }, (_, i) => ({ value: `m${i}` })),
  );

  // Unsettled leases, as answers still on their way to callers: 30 + 30 + 30 + 10.
  const leases: string[] = [];
  let handedOut = 0;
  while (handedOut < WINDOW) {
    const answer = await poll({ topic, group });
    if (answer.lease) leases.push(answer.lease);
    handedOut += answer.count;
  }
  assert.equal(handedOut, WINDOW, 'the last poll took only what fitted in the window');
  const full = await status();
  assert.equal(full.uncommittedMessages, WINDOW);
  assert.equal(full.leasedMessages, WINDOW);

  // Fifty messages wait, but none may go out before a commit.
  assert.equal((await poll({ topic, group, timeout_ms: 500 })).count, 0);

  // A poll blocked by the window answers once the first lease is committed.
  const blocked = poll({ topic, group, timeout_ms: 10_000 });
  await client.call('settle', { commit: [leases[0]!], rewind: [] }, { timeoutMs: 10_000 });
  const freed = await blocked;
  assert.equal(freed.count, 30, 'the room the commit freed');
  assert.equal(freed.messages[0]?.value, 'm100');
  assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), { 0: '30' });
  const after = await status();
  assert.equal(after.uncommittedMessages, WINDOW);
  assert.equal(after.leasedMessages, WINDOW);
});
