/**
 * One gateway link carrying many open leases: each lease listens for the link's close (its
 * messages go back to the group when the gateway goes), so a busy link holds more listeners
 * than Node's leak warning expects of one signal (ten). The worker must not warn of a leak
 * for that, and every lease must still settle. A real worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, produce, uniqueName } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
const GROUPS = 14;
let connected: ConnectedWorker;
let worker: WorkerProcess;
let client: BrokerWorkerClient;

before(async () => {
  connected = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    // Every lease must still be open when they are settled together, however slow the joins.
    BROKER_CONSUME_ACK_TIMEOUT_MS: '300000',
  });
  ({ worker, client } = connected);
});
after(() => connected?.close());

test(`${GROUPS} leases open on one link at once: no leak warning, and each settles`, async () => {
  const topic = uniqueName('listeners');
  await createTopic(kafka.plaintext, topic);
  await produce(
    kafka.plaintext,
    topic,
    Array.from({ length: 3 }, (_, i) => ({ value: `m${i}` })),
  );
  const groups = Array.from({ length: GROUPS }, (_, i) => uniqueName(`listeners-${i}`));
  // Each group polls until it holds a lease: a group's first poll may come back empty while it joins.
  const leases = await Promise.all(
    groups.map(async (group) => {
      for (let round = 0; round < 20; round++) {
        const params: ConsumeInput = { topic, group, from: 'group', max: 1, timeout_ms: 2000 };
        const out = (await client.call('consume', params, { timeoutMs: 6000, routingKey: group })) as {
          lease?: string;
        };
        if (out.lease) return out.lease;
      }
      throw new Error(`group ${group} never got a message`);
    }),
  );
  assert.equal(new Set(leases).size, GROUPS);
  assert.deepEqual(await client.call('settle', { commit: leases, rewind: [] }, { timeoutMs: 10_000 }), {
    settled: GROUPS,
    unknown: 0,
  });
  // Read after the settle's round trip, so a warning written while the last leases were
  // handed out has reached the worker's output (a separate pipe from the link).
  const warnings = worker.lines.filter((line) => line.includes('MaxListenersExceededWarning'));
  assert.deepEqual(warnings, []);
});
