/**
 * A publish to a topic whose send keeps failing and is retried (here a topic deleted
 * behind the worker's back, which kafkajs retries for seconds) must not hold publishes to
 * other topics: they are acknowledged while it is still retrying, instead of waiting for
 * it and maybe running out their own deadline (and then being written after all). Real
 * worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, uniqueName, withAdmin } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
let worker: ConnectedWorker;

before(async () => {
  worker = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
});
after(() => worker?.close());

const publish = (topic: string, value: string) =>
  worker.client.call('publish', { topic, value }, { timeoutMs: 15_000 });

it("a topic's failing send does not hold publishes to other topics", async () => {
  const gone = uniqueName('gone');
  const healthy = uniqueName('healthy');
  await createTopic(kafka.plaintext, gone, 1);
  await createTopic(kafka.plaintext, healthy, 1);
  // Both known to the worker, then one deleted without it knowing.
  await publish(gone, 'first');
  await publish(healthy, 'first');
  await withAdmin(kafka.plaintext, async (admin) => {
    await admin.deleteTopics({ topics: [gone] });
    // The deletion completes on the controller after the answer: until the broker stops
    // listing the topic, a send could still land in it and be acknowledged.
    for (let i = 0; i < 100 && (await admin.listTopics()).includes(gone); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
  });

  const order: string[] = [];
  const failing = publish(gone, 'lost').then(
    () => order.push('gone: acknowledged'),
    (error: { code?: string }) => order.push(`gone: ${error.code}`),
  );
  // Sent while the first is being sent and retried.
  const written = await publish(healthy, 'second').then(
    (result) => {
      order.push('healthy: acknowledged');
      return result;
    },
    (error: { code?: string; message?: string }) => {
      order.push(`healthy: ${error.code} ${error.message}`);
      return null;
    },
  );
  await failing;
  // The deleted topic's send normally retries for seconds; if the broker already answered
  // that it is gone, that send ends first and held nothing, which is fine too.
  const gaveUpAtOnce = order[0] === 'gone: UNKNOWN_TOPIC' && order[1] === 'healthy: acknowledged';
  if (!gaveUpAtOnce) assert.equal(order[0], 'healthy: acknowledged', order.join(', '));
  assert.equal(written?.offset, 1);
  assert.notEqual(order[1], 'gone: acknowledged');
});
