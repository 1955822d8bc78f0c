/**
 * A poll answer that crosses the gateway's cancel on the wire: the gateway has given the
 * poll up, so nobody will deliver that answer. Its lease is rewound as soon as the answer
 * arrives, not at the worker's ack timeout, so the next poll gets its messages at once.
 * Real worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, produce, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
let worker: WorkerProcess;

before(async () => {
  worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    // Far beyond the polls below: only the gateway's rewind can bring the message back in time.
    BROKER_CONSUME_ACK_TIMEOUT_MS: '600000',
    LOG_LEVEL: 'debug',
  });
});
after(() => worker?.stop());

function poll(
  client: BrokerWorkerClient,
  params: Partial<ConsumeInput> & { topic: string; group: string },
  signal?: AbortSignal,
) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 3000, ...params };
  return client.call('consume', full, {
    timeoutMs: full.timeout_ms + 2000,
    routingKey: params.group,
    ...(signal ? { signal } : {}),
  });
}

it('an answer that crossed its cancel is rewound when it arrives', async () => {
  const topic = uniqueName('crossed');
  const group = uniqueName('crossed-group');
  await createTopic(kafka.plaintext, topic, 1);
  const client = clientFor(worker.address);
  try {
    // Joins the group, so the next message is fetched and waiting.
    for (let joined = false; !joined; ) joined = (await poll(client, { topic, group })).joining !== true;
    await produce(kafka.plaintext, topic, [{ value: 'crossed' }]);
    await waitFor(
      async () =>
        (await client.call('status', {}, { timeoutMs: 5000 })).bufferedMessages === 1 ? true : undefined,
      { what: 'the message to be fetched', timeoutMs: 20_000, intervalMs: 50 },
    );

    const controller = new AbortController();
    const given = poll(client, { topic, group, max: 1 }, controller.signal).then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    );
    // This process reads nothing while the worker answers (a poll with max 1 and a message
    // waiting answers in milliseconds), then gives the poll up: the answer is already on
    // the wire when the cancel goes out.
    const until = Date.now() + 1000;
    while (Date.now() < until);
    controller.abort();
    assert.equal(await given, 'CANCELLED');

    const again = await poll(client, { topic, group });
    assert.deepEqual(
      again.messages.map((m) => m.value),
      ['crossed'],
    );
    // The crossing did happen: the worker leased the message, and the gateway rewound it.
    assert.ok(
      worker.lines.some((line) => line.includes('"lease rewound"')),
      'the cancel reached the worker before its answer went out; nothing crossed',
    );
  } finally {
    await client.close();
  }
});
