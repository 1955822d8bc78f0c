/**
 * A stopping gateway asks its polls in flight to answer now (BrokerWorkerClient.endPolls).
 * A poll whose request the gateway had accepted before it began to stop may reach the
 * worker link only afterwards (its body was still arriving, its key being checked): it
 * must answer now too, with what is ready, rather than hold the stopping gateway for its
 * whole timeout. Real worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import type { ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, groupOffsets, produce, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
let worker: WorkerProcess;

before(async () => {
  worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    // A poll holding fewer than `max` messages waits for more until its own timeout, so
    // only an answer-now request can make it answer before then.
    BROKER_CONSUME_LINGER_MS: '30000',
  });
});
after(() => worker?.stop());

function poll(client: BrokerWorkerClient, params: Partial<ConsumeInput> & { topic: string; group: string }) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 8000, ...params };
  return client.call('consume', full, { timeoutMs: full.timeout_ms + 2000, routingKey: params.group });
}

it('a poll sent after the gateway began to stop answers at once with what is ready', async () => {
  const topic = uniqueName('end-polls');
  const group = uniqueName('end-polls-group');
  await createTopic(kafka.plaintext, topic, 1);
  await produce(kafka.plaintext, topic, [{ value: 'first' }, { value: 'second' }]);
  const running = clientFor(worker.address);
  const stopping = clientFor(worker.address);
  try {
    // Joins the group and leaves "second" fetched and waiting (max 1 answers at once).
    const first = await poll(running, { topic, group, max: 1 });
    assert.deepEqual(
      first.messages.map((m) => m.value),
      ['first'],
    );
    await running.call('settle', { commit: [first.lease!], rewind: [] }, { timeoutMs: 10_000 });

    await stopping.call('status', {}, { timeoutMs: 5000 });
    stopping.endPolls();
    const late = await poll(stopping, { topic, group });
    assert.deepEqual(
      late.messages.map((m) => m.value),
      ['second'],
    );
    assert.match(late.hint ?? '', /shutting down/, 'the poll waited out its timeout instead');
    await stopping.call('settle', { commit: [late.lease!], rewind: [] }, { timeoutMs: 10_000 });
    assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), { 0: '2' });
  } finally {
    await running.close();
    await stopping.close();
  }
});
