/**
 * On a broker with Kafka's default group.initial.rebalance.delay.ms (3000 ms, as managed
 * services use), the first poll of a new group pays the join once and still returns the
 * messages that already exist within the default 5000 ms poll budget. The shared test
 * broker runs with delay 0, so this file starts its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LocalKafka } from '../../dev/kafka/local-kafka.ts';
import { type PrivateKafka, startPrivateKafka } from '../../dev/kafka/private-kafka.ts';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { CONSUME_MAX_DEFAULT, CONSUME_TIMEOUT_DEFAULT_MS } from '../../shared/event/limits.ts';
import { createTopic, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

let broker: PrivateKafka | undefined;
let kafka: LocalKafka;
let worker: WorkerProcess;
let client: BrokerWorkerClient;

before(async () => {
  broker = await startPrivateKafka(3000, { shortLived: true });
  kafka = broker.kafka;
  worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_DEFAULT_TOPIC: 'tasks',
    BROKER_CONSUMER_GROUP: 'agents',
  });
  client = clientFor(worker.address);
});

after(async () => {
  await client?.close();
  await worker?.stop();
  await broker?.cleanup();
});

describe('broker with the default 3000 ms initial rebalance delay', () => {
  it('returns existing messages on the first poll of a new group with the default budget', async () => {
    await createTopic(kafka.plaintext, 'tasks', 2);
    for (const value of ['t1', 't2', 't3'])
      await client.call('publish', { value, key: value }, { timeoutMs: 15_000 });

    // Defaults everywhere: the default topic and group, max 10, timeout 5000 ms.
    const first = await client.call(
      'consume',
      { from: 'group', max: CONSUME_MAX_DEFAULT, timeout_ms: CONSUME_TIMEOUT_DEFAULT_MS },
      { timeoutMs: CONSUME_TIMEOUT_DEFAULT_MS + 2000 },
    );
    assert.equal(first.group, 'agents');
    assert.equal(first.topic, 'tasks');
    // The first poll answers with work once the group has joined (not count 0); a message
    // of the other partition may come a batching window later, in the next poll.
    assert.ok(first.count >= 1, `the first poll of a new group returned nothing: ${JSON.stringify(first)}`);
    const firstValues = first.messages.map((m) => m.value);
    while (firstValues.length < 3) {
      const more = await client.call(
        'consume',
        { from: 'group', max: 10, timeout_ms: 5000 },
        { timeoutMs: 7000 },
      );
      assert.ok(more.count > 0, 'a waiting message was not returned');
      firstValues.push(...more.messages.map((m) => m.value));
    }
    assert.deepEqual(firstValues.sort(), ['t1', 't2', 't3']);

    // The consumer stays warm: the next poll reuses it instead of joining again.
    await client.call('publish', { value: 't4' }, { timeoutMs: 15_000 });
    const consumersBefore = (await client.call('status', {}, { timeoutMs: 2000 })).liveConsumers;
    assert.equal(consumersBefore, 1);
    const next = await client.call(
      'consume',
      { from: 'group', max: 1, timeout_ms: 5000 },
      { timeoutMs: 7000 },
    );
    assert.deepEqual(
      next.messages.map((m) => m.value),
      ['t4'],
    );
    assert.equal((await client.call('status', {}, { timeoutMs: 2000 })).liveConsumers, consumersBefore);

    // A second group on the same topic also starts from the earliest offset.
    const other = uniqueName('other');
    const fromStart: unknown[] = [];
    while (fromStart.length < 4) {
      const polled = await client.call(
        'consume',
        { from: 'group', group: other, max: 4, timeout_ms: 5000 },
        { timeoutMs: 7000 },
      );
      assert.ok(polled.count > 0, `the new group stopped after ${fromStart.length} of 4 messages`);
      fromStart.push(...polled.messages);
    }
    assert.equal(fromStart.length, 4);
  });
});
