/**
 * consume with from=earliest|latest reads without any consumer group: the caller's group
 * offsets stay exactly as they were and no group is created.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { elapse } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { groupExists, groupOffsets, uniqueName } from './support/kafka.ts';
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
  client = connected.client;
});
after(() => connected?.close());

const call = { timeoutMs: 10_000 };

describe('consume without a group', () => {
  it('earliest reads from the start and latest only what arrives, leaving group offsets unchanged', async () => {
    const topic = uniqueName('gl');
    const group = uniqueName('gl-group');
    await client.call('createTopic', { topic, partitions: 2, replication_factor: 1 }, call);
    for (let i = 0; i < 6; i += 1) {
      await client.call('publish', { topic, value: `v${i}`, key: `k${i % 3}` }, call);
    }
    const viaGroup = await client.call(
      'consume',
      { topic, from: 'group', group, max: 2, timeout_ms: 5000 },
      call,
    );
    assert.equal(viaGroup.count, 2);
    const offsetsBefore = await groupOffsets(kafka.plaintext, group, topic);

    // The group is named but must be ignored: nothing is joined, created or committed.
    const earliest = await client.call(
      'consume',
      { topic, from: 'earliest', group, max: 10, timeout_ms: 2000 },
      call,
    );
    assert.equal(earliest.group, '');
    assert.equal(earliest.from, 'earliest');
    assert.deepEqual(earliest.messages.map((m) => m.value).sort(), ['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
    for (const partition of [0, 1]) {
      const offsets = earliest.messages.filter((m) => m.partition === partition).map((m) => m.offset);
      assert.deepEqual(
        offsets,
        [...offsets].sort((a, b) => a - b),
      );
    }
    const two = await client.call('consume', { topic, from: 'earliest', max: 2, timeout_ms: 5000 }, call);
    assert.equal(two.count, 2);

    const latest = client.call('consume', { topic, from: 'latest', group, max: 2, timeout_ms: 6000 }, call);
    // A fixed pause: nothing outside the worker shows when a groupless `latest` read has
    // resolved its start offsets, so time stands in for it.
    await elapse(700);
    await client.call('publish', { topic, value: 'new-1', key: 'k0' }, call);
    await client.call('publish', { topic, value: 'new-2', key: 'k1' }, call);
    assert.deepEqual((await latest).messages.map((m) => m.value).sort(), ['new-1', 'new-2']);

    assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), offsetsBefore);
    const rest = await client.call(
      'consume',
      { topic, from: 'group', group, max: 6, timeout_ms: 3000 },
      call,
    );
    assert.equal(rest.count, 6, 'the group still has exactly its unread messages');
  });

  it('creates no consumer group on the broker', async () => {
    const topic = uniqueName('gl-nogroup');
    const group = uniqueName('never-created');
    await client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, call);
    await client.call('publish', { topic, value: 'x' }, call);
    const read = await client.call(
      'consume',
      { topic, from: 'earliest', group, max: 1, timeout_ms: 2000 },
      call,
    );
    assert.equal(read.count, 1);
    await client.call('consume', { topic, from: 'latest', group, max: 1, timeout_ms: 200 }, call);
    assert.equal(await groupExists(kafka.plaintext, group), false);
  });
});
