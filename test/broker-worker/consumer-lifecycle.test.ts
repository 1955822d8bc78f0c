/**
 * Warm consumers are bounded: an idle one leaves its group, the least recently used one
 * leaves when too many are live, and all leave on SIGTERM.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, describeGroup, groupState, uniqueName } from './support/kafka.ts';
import { type ConnectedWorker, clientFor, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connected(env: Record<string, string>): Promise<ConnectedWorker> {
  const started = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    ...env,
  });
  cleanups.push(() => started.close());
  return started;
}

/** A poll whose answer is then reported delivered, as the gateway does once it wrote it. */
async function pollOnce(client: BrokerWorkerClient, topic: string, group: string, timeoutMs = 5000) {
  const result = await client.call(
    'consume',
    { topic, from: 'group', group, max: 1, timeout_ms: timeoutMs },
    { timeoutMs: timeoutMs + 2000, routingKey: group },
  );
  if (result.lease) {
    await client.call(
      'settle',
      { commit: [result.lease], rewind: [] },
      { timeoutMs: 10_000, routingKey: group },
    );
  }
  return result;
}

describe('warm consumer lifecycle', () => {
  it('an idle consumer leaves its group after BROKER_CONSUMER_IDLE_MS', async () => {
    const { client } = await connected({ BROKER_CONSUMER_IDLE_MS: '1000' });
    const topic = uniqueName('idle');
    const group = uniqueName('idle-group');
    await createTopic(kafka.plaintext, topic);
    await client.call('publish', { topic, value: 'x' }, { timeoutMs: 10_000 });
    assert.equal((await pollOnce(client, topic, group)).count, 1);
    assert.equal((await client.call('status', {}, { timeoutMs: 2000 })).liveConsumers, 1);
    await waitFor(async () => (await client.call('status', {}, { timeoutMs: 2000 })).liveConsumers === 0, {
      what: 'the worker to have no live consumers',
      timeoutMs: 8000,
    });
    await waitFor(async () => (await groupState(kafka.plaintext, group)).members === 0, {
      what: `group ${group} to have no members`,
      timeoutMs: 8000,
    });
  });

  it('past BROKER_MAX_CONSUMERS the least recently used consumer leaves first', async () => {
    const { client } = await connected({ BROKER_MAX_CONSUMERS: '2' });
    const topic = uniqueName('lru');
    await createTopic(kafka.plaintext, topic);
    await client.call('publish', { topic, value: 'x' }, { timeoutMs: 10_000 });
    const [g1, g2, g3] = [uniqueName('lru-1'), uniqueName('lru-2'), uniqueName('lru-3')];
    await pollOnce(client, topic, g1);
    await pollOnce(client, topic, g2);
    await pollOnce(client, topic, g1, 200); // g2 is now the least recently used
    await pollOnce(client, topic, g3);
    assert.equal((await client.call('status', {}, { timeoutMs: 2000 })).liveConsumers, 2);
    await waitFor(async () => (await groupState(kafka.plaintext, g2)).members === 0, {
      what: 'the least recently used group to have no members',
      timeoutMs: 8000,
    });
    assert.equal((await groupState(kafka.plaintext, g1)).members, 1);
    assert.equal((await groupState(kafka.plaintext, g3)).members, 1);
  });

  it('SIGTERM makes every consumer leave its group and the process exit 0', async () => {
    const { worker, client } = await connected({});
    const topic = uniqueName('term');
    const group = uniqueName('term-group');
    await createTopic(kafka.plaintext, topic);
    await client.call('publish', { topic, value: 'x' }, { timeoutMs: 10_000 });
    await pollOnce(client, topic, group);
    assert.equal((await groupState(kafka.plaintext, group)).members, 1);
    assert.equal(await worker.stop(), 0);
    assert.deepEqual(await groupState(kafka.plaintext, group), { state: 'Empty', members: 0 });
  });

  it('with two workers, every poll of a group lands on the worker its name hashes to', async () => {
    const a = await connected({ BROKER_CLIENT_ID: 'worker-a' });
    const b = await connected({ BROKER_CLIENT_ID: 'worker-b' });
    const both = clientFor(a.worker.address, b.worker.address);
    cleanups.push(() => both.close());
    const topic = uniqueName('route');
    await createTopic(kafka.plaintext, topic, 2);
    // Three groups per worker, so both sides of the routing are exercised.
    const groups: string[] = [];
    const perWorker = new Map<string, number>();
    while (groups.length < 6) {
      const group = uniqueName('route');
      const owner = both.workerFor(group);
      if ((perWorker.get(owner) ?? 0) >= 3) continue;
      perWorker.set(owner, (perWorker.get(owner) ?? 0) + 1);
      groups.push(group);
    }
    for (let round = 0; round < 2; round += 1) {
      await Promise.all(groups.map((group) => pollOnce(both, topic, group, 200)));
    }
    for (const group of groups) {
      const owner = both.workerFor(group) === a.worker.address ? 'worker-a' : 'worker-b';
      assert.deepEqual((await describeGroup(kafka.plaintext, group)).clientIds, [owner], group);
    }
    const live = await Promise.all(
      [a.client, b.client].map((c) => c.call('status', {}, { timeoutMs: 2000 })),
    );
    assert.equal(live[0]!.liveConsumers + live[1]!.liveConsumers, groups.length);
  });
});
