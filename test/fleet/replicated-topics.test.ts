/**
 * event_create_topic's default replication factor (3, what managed hosting requires) on the
 * run's three-broker cluster: the topic gets three replicas per partition, all in sync, and
 * serves a publish and a group poll. (On one broker the same call is refused with what to
 * do: test/event/configuration.test.ts.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { callTool, startEventStack } from '../support/event-stack.ts';
import { testKafkaCluster } from '../support/kafka-cluster-env.ts';

const cluster = testKafkaCluster();

test('a topic created with the default replication factor has three in-sync replicas and serves', async () => {
  const stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: cluster.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  const topic = `replicated-${Date.now()}`;
  try {
    const client = await stack.mcp();
    const created = await callTool<{ replication_factor: number }>(client, 'event_create_topic', {
      topic,
      partitions: 2,
    });
    assert.equal(created.isError, false, created.text);
    assert.equal(created.data.replication_factor, 3);

    const admin = new Kafka({ brokers: cluster.plaintext.split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const [described] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
      assert.equal(described?.partitions.length, 2);
      for (const partition of described!.partitions) {
        assert.deepEqual([...partition.replicas].sort(), [1, 2, 3]);
        assert.equal(partition.isr.length, 3, `partition ${partition.partitionId} has every replica in sync`);
      }
    } finally {
      await admin.disconnect();
    }

    const published = await callTool(client, 'event_publish', { topic, value: 'on three brokers' });
    assert.equal(published.isError, false, published.text);
    let values: Array<string | null> = [];
    for (let polls = 0; values.length === 0 && polls < 20; polls++) {
      const polled = await callTool<{ messages: Array<{ value: string | null }> }>(client, 'event_consume', {
        topic,
        group: `${topic}-group`,
        timeout_ms: 2000,
      });
      assert.equal(polled.isError, false, polled.text);
      values = polled.data.messages.map((m) => m.value);
    }
    assert.deepEqual(values, ['on three brokers']);
  } finally {
    await stack.close();
  }
});
