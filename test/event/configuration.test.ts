/** What an operator's settings mean to an agent: credentials, the topic-admin gate, and no settings at all. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uniqueName } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, startEventStack } from '../support/event-stack.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();

test('unconfigured: the namespace mounts; every tool but event_capabilities names the missing settings', async () => {
  const stack = await startEventStack({});
  try {
    const client = await stack.mcp();
    const { tools } = await client.listTools();
    assert.equal(tools.length, 6);
    const caps = await callTool<{
      ready: boolean;
      details: { broker: { configured: boolean; missingSettings: string[] } };
    }>(client, 'event_capabilities');
    assert.equal(caps.isError, false);
    assert.equal(caps.data.ready, false);
    assert.equal(caps.data.details.broker.configured, false);
    assert.ok(caps.data.details.broker.missingSettings.includes('BROKER_BOOTSTRAP_SERVERS'));
    const calls: Array<[string, Record<string, unknown>]> = [
      ['event_publish', { value: 'x', topic: 't' }],
      ['event_consume', { topic: 't', group: 'g', timeout_ms: 100 }],
      ['event_topics', {}],
    ];
    for (const [name, args] of calls) {
      const result = await callTool(client, name, args);
      assert.equal(result.isError, true, name);
      assert.match(result.text, /BROKER_BOOTSTRAP_SERVERS/, name);
    }
    // Topic admin is refused first when it is off: that holds whatever the broker settings.
    for (const name of ['event_create_topic', 'event_delete_topic']) {
      const result = await callTool(client, name, { topic: 't' });
      assert.equal(result.isError, true, name);
      assert.match(result.text, /BROKER_BOOTSTRAP_SERVERS|BROKER_ALLOW_TOPIC_ADMIN/, name);
    }
  } finally {
    await stack.close();
  }
});

test('SASL_PLAINTEXT without credentials is unconfigured and names the key and secret settings', async () => {
  const stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.saslPlaintext,
    BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
  });
  try {
    const client = await stack.mcp();
    const result = await callTool(client, 'event_topics');
    assert.equal(result.isError, true);
    assert.match(result.text, /BROKER_API_KEY/);
    assert.match(result.text, /BROKER_API_SECRET/);
  } finally {
    await stack.close();
  }
});

test('SASL_PLAINTEXT: right credentials work; wrong ones give a clear error without the secret', async () => {
  const [username, password] = Object.entries(kafka.users)[0]!;
  const topic = uniqueName('sasl');
  const good = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.saslPlaintext,
    BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
    BROKER_API_KEY: username,
    BROKER_API_SECRET: password,
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  try {
    const client = await good.mcp();
    const created = await callTool(client, 'event_create_topic', { topic, replication_factor: 1 });
    assert.equal(created.isError, false, created.text);
    const published = await callTool(client, 'event_publish', { topic, value: 'over sasl' });
    assert.equal(published.isError, false, published.text);
    const polled = await callTool<ConsumeData>(client, 'event_consume', {
      topic,
      group: uniqueName('sasl-g'),
    });
    assert.deepEqual(
      polled.data.messages.map((m) => m.value),
      ['over sasl'],
    );
  } finally {
    await good.close();
  }

  const wrongSecret = 'definitely-wrong-secret';
  const bad = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.saslPlaintext,
    BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
    BROKER_API_KEY: username,
    BROKER_API_SECRET: wrongSecret,
  });
  try {
    const client = await bad.mcp();
    const result = await callTool(client, 'event_publish', { topic, value: 'nope' });
    assert.equal(result.isError, true);
    assert.match(result.text, /authentication/i);
    assert.ok(!result.text.includes(wrongSecret));
    const caps = await callTool(client, 'event_capabilities');
    assert.ok(!JSON.stringify(caps).includes(wrongSecret), 'capabilities never show the secret');
    assert.ok(!bad.worker.lines.join('\n').includes(wrongSecret), 'worker logs never show the secret');
  } finally {
    await bad.close();
  }
});

test('topic admin is refused unless BROKER_ALLOW_TOPIC_ADMIN=true, and a missing topic is not auto-created', async () => {
  const topic = uniqueName('gated');
  const stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'yes',
  });
  try {
    const client = await stack.mcp();
    for (const [name, args] of [
      ['event_create_topic', { topic, replication_factor: 1 }],
      ['event_delete_topic', { topic }],
    ] as const) {
      const result = await callTool(client, name, args);
      assert.equal(result.isError, true, name);
      assert.match(result.text, /BROKER_ALLOW_TOPIC_ADMIN/);
    }
    const publish = await callTool(client, 'event_publish', { topic, value: 'x' });
    assert.equal(publish.isError, true);
    assert.match(publish.text, /does not exist/);
    const topics = await callTool<{ topics: Array<{ name: string }> }>(client, 'event_topics');
    assert.ok(!topics.data.topics.some((t) => t.name === topic), 'not auto-created');
    const noTopic = await callTool(client, 'event_publish', { value: 'x' });
    assert.equal(noTopic.isError, true);
    assert.match(noTopic.text, /BROKER_DEFAULT_TOPIC/);
  } finally {
    await stack.close();
  }

  const open = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  try {
    const client = await open.mcp();
    const tooMany = await callTool(client, 'event_create_topic', { topic });
    assert.equal(tooMany.isError, true, 'the default replication factor 3 cannot be met by one broker');
    assert.match(tooMany.text, /replication/i);
    assert.match(tooMany.text, /replication_factor: 1/);
    assert.match(tooMany.text, /npm run kafka -- start --brokers 3/);
    const created = await callTool(client, 'event_create_topic', {
      topic,
      partitions: 2,
      replication_factor: 1,
    });
    assert.equal(created.isError, false, created.text);
    const listed = await callTool<{ topics: Array<{ name: string; partitions: number }> }>(
      client,
      'event_topics',
    );
    assert.equal(listed.data.topics.find((t) => t.name === topic)?.partitions, 2);
    const deleted = await callTool(client, 'event_delete_topic', { topic });
    assert.equal(deleted.isError, false, deleted.text);
  } finally {
    await open.close();
  }
});
