/**
 * Records that other producers write are untrusted: one the worker cannot describe must
 * not wedge the group or the read. A CreateTime outside what a JavaScript Date can hold
 * (a broker or topic that accepts any timestamp, as Kafka before 4.0 did by default)
 * threw while the batch was buffered, so the batch was fetched again and failed again:
 * that record and every later one of its partition were never delivered. Real worker
 * process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import type { ConsumedMessage, ConsumeInput } from '../../shared/event/schemas.ts';
import { testKafka } from '../support/kafka-env.ts';
import { uniqueName, withAdmin } from './support/kafka.ts';
import { type ConnectedWorker, startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
/** Past 8.64e15 ms, the largest time a Date holds. */
const FAR_FUTURE = '9000000000000000';
let worker: ConnectedWorker;

before(async () => {
  worker = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
});
after(() => worker?.close());

/** A topic that takes any CreateTime, holding a record stamped past what a Date holds between two plain ones. */
async function topicWithOddRecord(): Promise<string> {
  const topic = uniqueName('odd');
  await withAdmin(kafka.plaintext, (admin) =>
    createTopicsAndWait(admin, [
      {
        topic,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [{ name: 'message.timestamp.after.max.ms', value: '9223372036854775807' }],
      },
    ]),
  );
  const producer = new Kafka({
    clientId: 'test-producer',
    brokers: [kafka.plaintext],
    logLevel: logLevel.NOTHING,
  }).producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: [{ value: 'before' }, { value: 'odd', timestamp: FAR_FUTURE }, { value: 'after' }],
    });
  } finally {
    await producer.disconnect();
  }
  return topic;
}

function consume(params: Partial<ConsumeInput> & { topic: string }) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 3000, ...params };
  return worker.client.call('consume', full, {
    timeoutMs: full.timeout_ms + 2000,
    routingKey: full.group ?? '',
  });
}

function checkOdd(messages: ConsumedMessage[]): void {
  assert.deepEqual(
    messages.map((m) => m.value),
    ['before', 'odd', 'after'],
  );
  // Unrepresentable, so shown as unknown (the epoch), as a negative CreateTime is.
  assert.equal(messages[1]!.timestamp, new Date(0).toISOString());
}

it('a group poll delivers a record whose timestamp no Date can hold, and the records after it', async () => {
  const topic = await topicWithOddRecord();
  const group = uniqueName('odd-group');
  const got: ConsumedMessage[] = [];
  for (let round = 0; round < 5 && got.length < 3; round++)
    got.push(...(await consume({ topic, group })).messages);
  checkOdd(got);
});

it('a read from earliest returns it too', async () => {
  const topic = await topicWithOddRecord();
  const read = await consume({ topic, from: 'earliest', timeout_ms: 1000 });
  checkOdd(read.messages);
});
