/**
 * Concurrent publishes are coalesced into batches by the worker; every caller must still
 * get the exact partition and offset its own record was written at.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, uniqueName } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
let connected: ConnectedWorker;
let client: BrokerWorkerClient;

before(async () => {
  connected = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
  client = connected.client;
});
after(() => connected?.close());

describe('publish', () => {
  it('reports the true partition and offset of each record when many are sent at once', async () => {
    const [a, b] = [uniqueName('pub-a'), uniqueName('pub-b')];
    await createTopic(kafka.plaintext, a, 3);
    await createTopic(kafka.plaintext, b, 2);
    const sends = Array.from({ length: 90 }, (_, i) => {
      const topic = i % 3 === 0 ? b : a;
      const value = `${topic}#${i}`;
      return client
        .call(
          'publish',
          { topic, value, key: `key-${i % 7}`, headers: { n: String(i) } },
          { timeoutMs: 15_000 },
        )
        .then((written) => ({ value, written }));
    });
    const results = await Promise.all(sends);

    for (const topic of [a, b]) {
      const read = await client.call(
        'consume',
        { topic, from: 'earliest', max: 100, timeout_ms: 1500 },
        { timeoutMs: 5000 },
      );
      const mine = results.filter((r) => r.written.topic === topic);
      assert.equal(read.count, mine.length);
      const at = new Map(read.messages.map((m) => [`${m.partition}/${m.offset}`, m.value]));
      for (const { value, written } of mine) {
        assert.equal(
          at.get(`${written.partition}/${written.offset}`),
          value,
          `${value} reported at the wrong offset`,
        );
      }
    }
    // The same key always lands on the same partition.
    const partitionOfKey = new Map<string, number>();
    for (const [i, { written }] of results.entries()) {
      const key = `${written.topic}|key-${i % 7}`;
      assert.equal(partitionOfKey.get(key) ?? written.partition, written.partition);
      partitionOfKey.set(key, written.partition);
    }
  });
});
