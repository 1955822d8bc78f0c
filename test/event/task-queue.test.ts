/**
 * The SPEC's task-queue pattern end to end: MCP client -> gateway -> IPC -> broker-worker
 * -> real Kafka, with kafkajs reading the topic directly as the independent witness.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { groupOffsets, uniqueName } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
import { elapse } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { postToolCall } from '../support/tool-call.ts';

const kafka = testKafka();
const topic = uniqueName('tasks');
const group = uniqueName('workers');
let stack: EventStack;

before(async () => {
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_DEFAULT_TOPIC: topic,
    BROKER_CONSUMER_GROUP: group,
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
});
after(() => stack.close());

/** Reads a whole topic with a plain kafkajs consumer in a throwaway group. */
async function witness(expected: number) {
  const consumer = new Kafka({ brokers: [kafka.plaintext], logLevel: logLevel.NOTHING }).consumer({
    groupId: uniqueName('witness'),
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: Array<{
    partition: number;
    offset: number;
    key: string | null;
    value: string;
    headers: Record<string, string>;
  }> = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = String(value);
        seen.push({
          partition,
          offset: Number(message.offset),
          key: message.key?.toString() ?? null,
          value: message.value?.toString() ?? '',
          headers,
        });
        if (seen.length === expected) resolve();
      },
    });
  });
  await consumer.disconnect();
  return seen;
}

test('publish keyed tasks, drain them through a group in batches, then count 0', async () => {
  const client = await stack.mcp();
  const created = await callTool(client, 'event_create_topic', {
    topic,
    partitions: 3,
    replication_factor: 1,
  });
  assert.equal(created.isError, false, created.text);

  const published: Array<{ key: string; value: string; partition: number; offset: number }> = [];
  for (let i = 0; i < 12; i++) {
    const key = `customer-${i % 4}`;
    const value = JSON.stringify({ task: 'send-invoice', n: i });
    const result = await callTool<{ topic: string; partition: number; offset: number }>(
      client,
      'event_publish',
      {
        value,
        key,
        headers: { 'content-type': 'application/json', attempt: '1' },
      },
    );
    assert.equal(result.isError, false, result.text);
    assert.equal(result.data.topic, topic);
    published.push({ key, value, partition: result.data.partition, offset: result.data.offset });
  }
  for (const { key, partition } of published) {
    assert.ok(
      published.filter((p) => p.key === key).every((p) => p.partition === partition),
      'same key, same partition',
    );
  }

  const received: ConsumeData['messages'] = [];
  for (let round = 0; round < 10 && received.length < published.length; round++) {
    const polled = await callTool<ConsumeData>(client, 'event_consume', { max: 5, timeout_ms: 5000 });
    assert.equal(polled.isError, false, polled.text);
    assert.equal(polled.data.group, group);
    assert.ok(polled.data.count <= 5);
    assert.equal(polled.data.count, polled.data.messages.length);
    received.push(...polled.data.messages);
  }
  assert.equal(received.length, published.length);
  assert.deepEqual(
    received.map((m) => `${m.partition}/${m.offset}`).sort(),
    published.map((p) => `${p.partition}/${p.offset}`).sort(),
    'each message handed out exactly once',
  );
  for (const partition of [0, 1, 2]) {
    const offsets = received.filter((m) => m.partition === partition).map((m) => m.offset);
    assert.deepEqual(
      offsets,
      [...offsets].sort((a, b) => a - b),
      `order kept within partition ${partition}`,
    );
  }
  const first = received.find(
    (m) => m.offset === published[0]!.offset && m.partition === published[0]!.partition,
  )!;
  assert.equal(first.key, 'customer-0');
  assert.deepEqual(JSON.parse(first.value!), { task: 'send-invoice', n: 0 });
  assert.deepEqual(first.headers, { 'content-type': 'application/json', attempt: '1' });
  assert.ok(!Number.isNaN(Date.parse(first.timestamp)));

  const again = await callTool<ConsumeData>(client, 'event_consume', { timeout_ms: 500 });
  assert.equal(again.isError, false, again.text);
  assert.equal(again.data.count, 0);

  const committed = await groupOffsets(kafka.plaintext, group, topic);
  for (const partition of [0, 1, 2]) {
    const last = Math.max(-1, ...published.filter((p) => p.partition === partition).map((p) => p.offset));
    assert.equal(Number(committed[partition] ?? -1), last + 1, `committed offset of partition ${partition}`);
  }

  const seen = await witness(published.length);
  assert.deepEqual(
    seen.map((m) => `${m.partition}/${m.offset}/${m.key}/${m.value}/${m.headers.attempt}`).sort(),
    published.map((p) => `${p.partition}/${p.offset}/${p.key}/${p.value}/1`).sort(),
    'kafkajs sees the same records, keys, partitions and headers',
  );
});

test('earliest and latest read without touching the group', async () => {
  const client = await stack.mcp();
  const before = await groupOffsets(kafka.plaintext, group, topic);
  const earliest = await callTool<ConsumeData>(client, 'event_consume', {
    from: 'earliest',
    max: 100,
    timeout_ms: 3000,
  });
  assert.equal(earliest.isError, false, earliest.text);
  assert.equal(earliest.data.count, 12);
  assert.equal(earliest.data.group, '');

  const latestPoll = callTool<ConsumeData>(client, 'event_consume', {
    from: 'latest',
    max: 1,
    timeout_ms: 8000,
  });
  // A fixed pause: nothing outside the worker shows when a `latest` read has resolved its
  // start offsets, so time stands in for it.
  await elapse(1500);
  await callTool(client, 'event_publish', { value: 'fresh', key: 'late' });
  const latest = await latestPoll;
  assert.equal(latest.isError, false, latest.text);
  assert.deepEqual(
    latest.data.messages.map((m) => m.value),
    ['fresh'],
  );
  assert.deepEqual(await groupOffsets(kafka.plaintext, group, topic), before);

  const group1 = await callTool<ConsumeData>(client, 'event_consume', { max: 10, timeout_ms: 3000 });
  assert.deepEqual(
    group1.data.messages.map((m) => m.value),
    ['fresh'],
    'the group still gets the new message exactly once',
  );
});

test('concurrent polls of one group never receive the same message', async () => {
  const client = await stack.mcp();
  const other = await stack.mcp();
  const values = Array.from({ length: 30 }, (_, i) => `c-${i}`);
  for (const value of values) await callTool(client, 'event_publish', { value, key: value });
  const seen: string[] = [];
  for (let round = 0; round < 8 && seen.length < values.length; round++) {
    const polls = await Promise.all([
      callTool<ConsumeData>(client, 'event_consume', { max: 4, timeout_ms: 1500 }),
      callTool<ConsumeData>(other, 'event_consume', { max: 4, timeout_ms: 1500 }),
      callTool<ConsumeData>(client, 'event_consume', { max: 4, timeout_ms: 1500 }),
    ]);
    for (const poll of polls) {
      assert.equal(poll.isError, false, poll.text);
      seen.push(...poll.data.messages.map((m) => m.value!));
    }
  }
  assert.deepEqual([...seen].sort(), [...values].sort());
});

test('a poll whose HTTP client goes away commits nothing it did not hand back', async () => {
  // Empty the queue first: a poll answers as soon as a message is waiting, and this one must still be waiting.
  const drainer = await stack.mcp();
  while (
    (await callTool<ConsumeData>(drainer, 'event_consume', { max: 100, timeout_ms: 500 })).data.count > 0
  );
  const controller = new AbortController();
  const abandoned = postToolCall(
    `${stack.gw.url}/event/mcp`,
    stack.gw.apiKey,
    'event_consume',
    { max: 10, timeout_ms: 6000 },
    { signal: controller.signal },
  ).catch(() => 'aborted');
  // A fixed pause: nothing outside the worker shows that the poll is being held there.
  await elapse(800);
  controller.abort();
  assert.equal(await abandoned, 'aborted');

  const client = await stack.mcp();
  // A fixed pause: nothing outside the worker shows that the abandoned poll was settled.
  await elapse(200);
  for (const value of ['after-cancel-1', 'after-cancel-2'])
    await callTool(client, 'event_publish', { value });
  const got: string[] = [];
  for (let round = 0; round < 4 && got.length < 2; round++) {
    const poll = await callTool<ConsumeData>(client, 'event_consume', { max: 10, timeout_ms: 2000 });
    got.push(...poll.data.messages.map((m) => m.value!));
  }
  assert.deepEqual(got.sort(), ['after-cancel-1', 'after-cancel-2']);
});
