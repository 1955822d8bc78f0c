/**
 * SASL credentials, the topic-admin gate, and the unconfigured worker, against the real
 * local Kafka through real worker processes.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { createTopic, uniqueName, withAdmin } from './support/kafka.ts';
import { startConnectedWorker } from './support/worker-process.ts';

const kafka = testKafka();
const [user, password] = Object.entries(kafka.users)[0]!;
const call = { timeoutMs: 15_000 };
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connected(env: Record<string, string>) {
  const started = await startConnectedWorker(env);
  cleanups.push(() => started.close());
  return started;
}

function callError(code: string, check?: (message: string) => void) {
  return (e: unknown) => {
    assert.ok(e instanceof WorkerCallError, String(e));
    assert.equal(e.code, code, e.message);
    check?.(e.message);
    return true;
  };
}

describe('SASL credentials', () => {
  it('works with the right credentials (SASL_PLAINTEXT and SASL_SSL with a private CA)', async () => {
    const topic = uniqueName('sasl');
    await createTopic(kafka.plaintext, topic);
    const plain = await connected({
      BROKER_BOOTSTRAP_SERVERS: kafka.saslPlaintext,
      BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
      BROKER_API_KEY: user,
      BROKER_API_SECRET: password,
    });
    const written = await plain.client.call('publish', { topic, value: 'over sasl' }, call);
    assert.equal(written.offset, 0);

    const tls = await connected({
      BROKER_BOOTSTRAP_SERVERS: kafka.saslSsl,
      BROKER_API_KEY: user,
      BROKER_API_SECRET: password,
      BROKER_SSL_CA_FILE: kafka.saslSslCaPath,
    });
    const read = await tls.client.call(
      'consume',
      { topic, from: 'earliest', max: 1, timeout_ms: 3000 },
      call,
    );
    assert.deepEqual(
      read.messages.map((m) => m.value),
      ['over sasl'],
    );
    const status = await tls.client.call('status', {}, call);
    assert.equal(status.securityProtocol, 'SASL_SSL');
    assert.equal(status.saslMechanism, 'PLAIN');
    assert.equal(status.credentialsConfigured, true);
  });

  it('reports wrong credentials as AUTHENTICATION_FAILED without leaking them', async () => {
    const wrong = 'definitely-wrong-secret-9f3';
    const { client, worker } = await connected({
      BROKER_BOOTSTRAP_SERVERS: kafka.saslPlaintext,
      BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
      BROKER_API_KEY: user,
      BROKER_API_SECRET: wrong,
    });
    await assert.rejects(
      client.call('topics', {}, call),
      callError('AUTHENTICATION_FAILED', (message) => {
        assert.match(message, /BROKER_API_KEY and BROKER_API_SECRET/);
        assert.doesNotMatch(message, new RegExp(wrong));
      }),
    );
    // status reports the periodic probe's verdict (every 2 s), which needs its own failed attempt.
    const status = await waitFor(
      async () => {
        const now = await client.call('status', {}, call);
        return now.lastBrokerError ? now : undefined;
      },
      { what: "the worker's probe to report a broker error", timeoutMs: 10_000, intervalMs: 100 },
    );
    assert.match(status.lastBrokerError?.message ?? '', /rejected the SASL credentials/);
    assert.doesNotMatch(JSON.stringify(status), new RegExp(wrong));
    assert.equal(
      worker.lines.some((line) => line.includes(wrong)),
      false,
      'the secret appeared in the log',
    );
  });
});

describe('topic admin', () => {
  it('is refused while BROKER_ALLOW_TOPIC_ADMIN is not exactly true', async () => {
    const { client } = await connected({
      BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
      BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
      BROKER_ALLOW_TOPIC_ADMIN: 'TRUE',
    });
    const topic = uniqueName('gate');
    await assert.rejects(
      client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, call),
      callError('TOPIC_ADMIN_DISABLED', (m) => assert.match(m, /BROKER_ALLOW_TOPIC_ADMIN/)),
    );
    await createTopic(kafka.plaintext, topic);
    await assert.rejects(client.call('deleteTopic', { topic }, call), callError('TOPIC_ADMIN_DISABLED'));
    const listed = await withAdmin(kafka.plaintext, (admin) => admin.listTopics());
    assert.ok(listed.includes(topic), 'the refused delete must not have run');
    assert.equal((await client.call('status', {}, call)).topicAdminEnabled, false);
  });

  it('creates, refuses duplicates and impossible replication, lists and deletes when enabled', async () => {
    const { client } = await connected({
      BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
      BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
      BROKER_ALLOW_TOPIC_ADMIN: 'true',
    });
    const topic = uniqueName('admin');
    const other = uniqueName('admin-other');
    await assert.rejects(
      client.call('createTopic', { topic, partitions: 1, replication_factor: 3 }, call),
      callError('INVALID_ARGUMENT', (m) => assert.match(m, /1 broker.*replication_factor: 1/s)),
    );
    assert.deepEqual(
      await client.call('createTopic', { topic, partitions: 4, replication_factor: 1 }, call),
      {
        topic,
        partitions: 4,
        replication_factor: 1,
        created: true,
      },
    );
    await assert.rejects(
      client.call('createTopic', { topic, partitions: 1, replication_factor: 1 }, call),
      callError('TOPIC_EXISTS'),
    );
    await client.call('createTopic', { topic: other, partitions: 1, replication_factor: 1 }, call);
    const { topics } = await client.call('topics', {}, call);
    assert.deepEqual(
      topics.find((t) => t.name === topic),
      { name: topic, partitions: 4, internal: false },
    );
    assert.equal(topics.find((t) => t.name === '__consumer_offsets')?.internal ?? true, true);

    await client.call('publish', { topic, value: 'before delete' }, call);
    assert.deepEqual(await client.call('deleteTopic', { topic }, call), { topic, deleted: true });
    await assert.rejects(client.call('publish', { topic, value: 'after' }, call), callError('UNKNOWN_TOPIC'));
    await assert.rejects(client.call('deleteTopic', { topic }, call), callError('UNKNOWN_TOPIC'));
    // The producer that wrote to the deleted topic must not poison later publishes.
    const written = await client.call('publish', { topic: other, value: 'still fine' }, call);
    assert.equal(written.topic, other);
  });
});

describe('an unconfigured worker', () => {
  it('runs, reports what is missing, and answers NOT_CONFIGURED to every broker call', async () => {
    const { client } = await connected({ BROKER_BOOTSTRAP_SERVERS: kafka.saslSsl });
    const status = await client.call('status', {}, call);
    assert.equal(status.configured, false);
    assert.deepEqual(status.missingSettings, ['BROKER_API_KEY', 'BROKER_API_SECRET']);
    const attempts: Array<() => Promise<unknown>> = [
      () => client.call('publish', { value: 'x', topic: 't' }, call),
      () => client.call('consume', { topic: 't', from: 'group', group: 'g', max: 1, timeout_ms: 10 }, call),
      () => client.call('topics', {}, call),
      () => client.call('createTopic', { topic: 't', partitions: 1, replication_factor: 1 }, call),
      () => client.call('deleteTopic', { topic: 't' }, call),
    ];
    for (const attempt of attempts) {
      await assert.rejects(
        attempt(),
        callError('NOT_CONFIGURED', (m) =>
          assert.match(m, /BROKER_API_KEY, BROKER_API_SECRET are not set.*SASL_SSL/s),
        ),
      );
    }
  });
});
