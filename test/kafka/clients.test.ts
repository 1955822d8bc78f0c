/**
 * Real kafkajs clients against the run's shared broker on each listener: what the broker-worker
 * will do in production against PLAINTEXT, SASL_PLAINTEXT and SASL_SSL (PLAIN) clusters.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Kafka, type KafkaConfig, logLevel, Partitioners } from 'kafkajs';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import { testKafka } from '../support/kafka-env.ts';

const env = testKafka();

function client(config: Omit<KafkaConfig, 'clientId' | 'logLevel'>): Kafka {
  return new Kafka({ clientId: 'local-kafka-test', logLevel: logLevel.NOTHING, ...config });
}

async function createTopic(topic: string): Promise<void> {
  const admin = client({ brokers: [env.plaintext] }).admin();
  await admin.connect();
  try {
    assert.equal(await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }]), true);
  } finally {
    await admin.disconnect();
  }
}

/** Produces one message and reads it back through a consumer group, both over `config`. */
async function roundTrip(config: Omit<KafkaConfig, 'clientId' | 'logLevel'>): Promise<void> {
  const topic = `local-kafka-${randomUUID()}`;
  await createTopic(topic);
  const kafka = client(config);
  const value = `hello ${randomUUID()}`;

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({ topic, messages: [{ key: 'k', value }] });
  } finally {
    await producer.disconnect();
  }

  const consumer = kafka.consumer({ groupId: `g-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within 30 s')), 30_000);
      void consumer
        .run({
          eachMessage: async ({ message }) => {
            clearTimeout(timer);
            resolve(message.value?.toString() ?? '');
          },
        })
        .catch(reject);
    });
    assert.equal(received, value);
  } finally {
    await consumer.disconnect();
  }
}

function plain(username: string, password: string) {
  return { mechanism: 'plain' as const, username, password };
}

const [user, password] = Object.entries(env.users)[0] ?? ['', ''];

test('round trip over PLAINTEXT', { timeout: 60_000 }, async () => {
  await roundTrip({ brokers: [env.plaintext] });
});

test('round trip over SASL_PLAINTEXT with the right password', { timeout: 60_000 }, async () => {
  await roundTrip({ brokers: [env.saslPlaintext], sasl: plain(user, password) });
});

test('round trip over SASL_SSL trusting the exported CA', { timeout: 60_000 }, async () => {
  assert.ok(env.saslSsl, 'the shared broker has a SASL_SSL listener');
  const ca = readFileSync(env.saslSslCaPath, 'utf8');
  assert.match(ca, /-----BEGIN CERTIFICATE-----/);
  await roundTrip({ brokers: [env.saslSsl], ssl: { ca: [ca] }, sasl: plain(user, password) });
});

test('SASL_SSL is refused without trusting the CA', { timeout: 30_000 }, async () => {
  const admin = client({
    brokers: [env.saslSsl],
    ssl: true,
    sasl: plain(user, password),
    retry: { retries: 0 },
  }).admin();
  await assert.rejects(admin.connect(), (error: Error) => {
    assert.match(error.message, /self-signed certificate/);
    return true;
  });
  await admin.disconnect();
});

for (const [listener, config] of [
  ['SASL_PLAINTEXT', () => ({ brokers: [env.saslPlaintext] })],
  ['SASL_SSL', () => ({ brokers: [env.saslSsl], ssl: { ca: [readFileSync(env.saslSslCaPath, 'utf8')] } })],
] as const) {
  test(`a wrong password is refused with an authentication error over ${listener}`, {
    timeout: 30_000,
  }, async () => {
    const admin = client({
      ...config(),
      sasl: plain(user, `${password}-wrong`),
      retry: { retries: 0 },
    }).admin();
    await assert.rejects(admin.connect(), (error: Error) => {
      assert.equal(error.name, 'KafkaJSSASLAuthenticationError');
      assert.match(error.message, /Invalid username or password/);
      return true;
    });
    await admin.disconnect();
  });
}

test('producing to a missing topic does not create it', { timeout: 30_000 }, async () => {
  const kafka = client({ brokers: [env.plaintext], retry: { retries: 1, initialRetryTime: 100 } });
  const topic = `missing-${randomUUID()}`;
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await assert.rejects(producer.send({ topic, messages: [{ value: 'x' }] }), (error: Error) => {
      const cause = (error as { cause?: { type?: string } }).cause;
      assert.equal(cause?.type, 'UNKNOWN_TOPIC_OR_PARTITION');
      return true;
    });
  } finally {
    await producer.disconnect();
  }
  const admin = kafka.admin();
  await admin.connect();
  try {
    assert.equal((await admin.listTopics()).includes(topic), false);
  } finally {
    await admin.disconnect();
  }
});
