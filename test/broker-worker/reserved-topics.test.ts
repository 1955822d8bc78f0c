/**
 * Kafka's internal and reserved topics are never created or deleted through the event
 * tools, whatever BROKER_ALLOW_TOPIC_ADMIN says: deleting __consumer_offsets would wipe
 * every consumer group's position on the cluster.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import { testKafka } from '../support/kafka-env.ts';
import { groupOffsets, uniqueName, withAdmin } from './support/kafka.ts';
import { startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
const call = { timeoutMs: 15_000 };
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connected(allowTopicAdmin: string) {
  const started = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: allowTopicAdmin,
  });
  cleanups.push(() => started.close());
  return started.client;
}

function reserved(e: unknown): boolean {
  assert.ok(e instanceof WorkerCallError, String(e));
  assert.equal(e.code, 'TOPIC_RESERVED', e.message);
  assert.match(e.message, /Nothing was changed/);
  assert.match(e.message, /whatever BROKER_ALLOW_TOPIC_ADMIN says/);
  return true;
}

/** A group with a committed offset, to show the refused delete left every group's position alone. */
async function groupWithOffset(topic: string, group: string): Promise<void> {
  const client = new Kafka({ brokers: [kafka.plaintext], logLevel: logLevel.NOTHING });
  await withAdmin(kafka.plaintext, (admin) =>
    createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]),
  );
  const admin = client.admin();
  await admin.connect();
  try {
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '0' }] });
  } finally {
    await admin.disconnect();
  }
}

describe('internal and reserved topics', () => {
  it('deleting __consumer_offsets is refused with topic admin enabled, and every group keeps its offsets', async () => {
    const client = await connected('true');
    const topic = uniqueName('reserved');
    const group = uniqueName('reserved-group');
    await groupWithOffset(topic, group);
    await assert.rejects(client.call('deleteTopic', { topic: '__consumer_offsets' }, call), reserved);
    await assert.rejects(client.call('deleteTopic', { topic: '__transaction_state' }, call), reserved);
    await assert.rejects(
      client.call('createTopic', { topic: '__my_state', partitions: 1, replication_factor: 1 }, call),
      reserved,
    );
    const listed = await withAdmin(kafka.plaintext, (admin) => admin.listTopics());
    assert.ok(listed.includes('__consumer_offsets'), '__consumer_offsets must still exist');
    assert.ok(!listed.includes('__my_state'), 'the refused create must not have run');
    assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), { 0: '0' });
    // An ordinary topic is still deleted (the broker does not mark it internal).
    assert.deepEqual(await client.call('deleteTopic', { topic }, call), { topic, deleted: true });
  });

  it('is refused as reserved (not merely disabled) without topic admin', async () => {
    const client = await connected('false');
    await assert.rejects(client.call('deleteTopic', { topic: '__consumer_offsets' }, call), reserved);
    await assert.rejects(
      client.call('createTopic', { topic: '__consumer_offsets', partitions: 1, replication_factor: 1 }, call),
      reserved,
    );
  });
});
