/**
 * Reading through consumer groups, against the real local Kafka, through a real worker
 * process and the real gateway client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import type { ConsumedMessage, ConsumeInput, PublishResult } from '../../shared/event/schemas.ts';
import { elapse, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { javaPartitions } from './support/java-partitioner.ts';
import { groupOffsets, groupState, produce, uniqueName } from './support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from './support/worker-process.ts';

const kafka = testKafka();
const ACK_TIMEOUT_MS = 3000;
const env = {
  BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
  BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  BROKER_ALLOW_TOPIC_ADMIN: 'true',
  BROKER_CONSUME_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS),
};

let worker: WorkerProcess;
let client: BrokerWorkerClient;

before(async () => {
  worker = await startWorker(env);
  client = clientFor(worker.address);
});
after(async () => {
  await client?.close();
  await worker?.stop();
});

async function topic(partitions: number): Promise<string> {
  const name = uniqueName('gc');
  await client.call('createTopic', { topic: name, partitions, replication_factor: 1 }, { timeoutMs: 15_000 });
  return name;
}

/** A poll whose answer is then reported delivered, as the gateway does once it wrote it. */
async function poll(
  c: BrokerWorkerClient,
  params: Partial<ConsumeInput> & { topic: string },
  signal?: AbortSignal,
) {
  const result = await pollUnsettled(c, params, signal);
  if (result.lease) await settle(c, { commit: [result.lease] });
  return result;
}

function pollUnsettled(
  c: BrokerWorkerClient,
  params: Partial<ConsumeInput> & { topic: string },
  signal?: AbortSignal,
) {
  const full: ConsumeInput = { from: 'group', max: 10, timeout_ms: 5000, ...params };
  return c.call('consume', full, { timeoutMs: full.timeout_ms + 2000, ...(signal ? { signal } : {}) });
}

function settle(c: BrokerWorkerClient, params: { commit?: string[]; rewind?: string[] }) {
  return c.call('settle', { commit: [], rewind: [], ...params }, { timeoutMs: 10_000 });
}

/** Polls (settling each answer) until `count` messages came back or a poll returns none. */
async function pollCount(
  c: BrokerWorkerClient,
  params: Partial<ConsumeInput> & { topic: string },
  count: number,
) {
  const seen: ConsumedMessage[] = [];
  while (seen.length < count) {
    const next = await poll(c, { ...params, max: Math.min(params.max ?? 10, count - seen.length) });
    if (next.count === 0) break;
    seen.push(...next.messages);
  }
  return seen;
}

async function publishAll(t: string, values: string[], key?: (i: number) => string) {
  const results: PublishResult[] = [];
  for (const [i, value] of values.entries()) {
    results.push(
      await client.call(
        'publish',
        { topic: t, value, ...(key ? { key: key(i) } : {}) },
        { timeoutMs: 10_000 },
      ),
    );
  }
  return results;
}

describe('consume through a consumer group', () => {
  it('runs the task-queue pattern: publish, poll, poll again returns 0, offsets committed', async () => {
    const t = await topic(3);
    const group = uniqueName('workers');
    const task = (i: number) => JSON.stringify({ task: 'resize', image: i });
    const published: PublishResult[] = [];
    for (let i = 0; i < 5; i += 1) {
      published.push(
        await client.call(
          'publish',
          {
            topic: t,
            value: task(i),
            key: `job-${i % 2}`,
            headers: { 'content-type': 'application/json', trace: `t${i}` },
          },
          { timeoutMs: 10_000 },
        ),
      );
    }
    for (const p of published) {
      assert.equal(p.topic, t);
      assert.ok(Number.isInteger(p.partition) && Number.isInteger(p.offset));
      assert.ok(!Number.isNaN(Date.parse(p.timestamp)));
    }

    const first = { messages: await pollCount(client, { topic: t, group, max: 5 }, 5) };
    assert.deepEqual(first.messages.map((m) => m.value).sort(), [0, 1, 2, 3, 4].map(task).sort());
    for (const m of first.messages) {
      const i = (JSON.parse(m.value!) as { image: number }).image;
      assert.equal(m.key, `job-${i % 2}`);
      assert.deepEqual(m.headers, { 'content-type': 'application/json', trace: `t${i}` });
      assert.equal(typeof m.offset, 'number');
      assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const sent = published[i]!;
      assert.equal(m.partition, sent.partition);
      assert.equal(m.offset, sent.offset);
    }
    // Order within a partition is kept.
    for (const partition of [0, 1, 2]) {
      const offsets = first.messages.filter((m) => m.partition === partition).map((m) => m.offset);
      assert.deepEqual(
        offsets,
        [...offsets].sort((a, b) => a - b),
      );
    }

    const again = await poll(client, { topic: t, group, timeout_ms: 300 });
    assert.equal(again.count, 0);
    // Committed once delivered: the broker has offset+1 for every message handed out.
    const committed = await groupOffsets(kafka.plaintext, group, t);
    for (const partition of [0, 1, 2]) {
      const handed = first.messages.filter((m) => m.partition === partition);
      const expected = handed.length === 0 ? '-1' : String(Math.max(...handed.map((m) => m.offset)) + 1);
      assert.equal(committed[partition], expected, `partition ${partition}`);
    }
  });

  it('routes keys to the partitions Java clients choose (witness: Kafka jar murmur2)', async () => {
    const partitions = 6;
    const t = await topic(partitions);
    const keys = [...Array.from({ length: 16 }, (_, i) => `customer-${i}`), 'ключ', '🙂 emoji', '', 'a'];
    const expected = await javaPartitions(keys, partitions);
    const got = await publishAll(
      t,
      keys.map(() => 'x'),
      (i) => keys[i]!,
    );
    assert.deepEqual(
      got.map((r) => r.partition),
      expected,
    );
  });

  it('never hands one message to two concurrent polls', async () => {
    const t = await topic(3);
    const group = uniqueName('concurrent');
    await publishAll(
      t,
      Array.from({ length: 60 }, (_, i) => `m${i}`),
      (i) => `k${i}`,
    );
    const results = await Promise.all(
      Array.from({ length: 6 }, () => pollCount(client, { topic: t, group, max: 10 }, 60)),
    );
    const values = results.flatMap((r) => r.map((m) => m.value));
    assert.equal(values.length, 60);
    assert.equal(new Set(values).size, 60, 'a message was handed out twice');
    assert.equal((await poll(client, { topic: t, group, timeout_ms: 300 })).count, 0);
  });

  it('gives a cancelled poll nothing and hands later messages to the next poll', async () => {
    const t = await topic(1);
    const group = uniqueName('cancel');
    const controller = new AbortController();
    // Nothing to read, so the poll holds on until its timeout; the gateway gives up first.
    const waiting = poll(client, { topic: t, group, max: 10, timeout_ms: 20_000 }, controller.signal);
    await waitFor(async () => (await groupState(kafka.plaintext, group)).members > 0, {
      what: `the poll's consumer to join group ${group}`,
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    controller.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof WorkerCallError && e.code === 'CANCELLED');
    await publishAll(t, ['a', 'b', 'c']);
    assert.deepEqual(await groupOffsets(kafka.plaintext, group, t), { 0: '-1' });
    const next = { messages: await pollCount(client, { topic: t, group, max: 3 }, 3) };
    assert.deepEqual(
      next.messages.map((m) => m.value),
      ['a', 'b', 'c'],
    );
  });

  it('serves two topics read by one group (each member gets only its own topic)', async () => {
    const [a, b] = [await topic(2), await topic(2)];
    const group = uniqueName('two-topics');
    await publishAll(a, ['a1', 'a2']);
    await publishAll(b, ['b1', 'b2']);
    const [ra, rb] = await Promise.all([
      pollCount(client, { topic: a, group, max: 2 }, 2),
      pollCount(client, { topic: b, group, max: 2 }, 2),
    ]);
    assert.deepEqual(ra.map((m) => m.value).sort(), ['a1', 'a2']);
    assert.deepEqual(rb.map((m) => m.value).sort(), ['b1', 'b2']);
  });

  it('resumes where the group left off after the worker restarts', async () => {
    const t = await topic(2);
    const group = uniqueName('restart');
    await publishAll(t, ['r1', 'r2', 'r3', 'r4'], (i) => `k${i}`);
    const before = { messages: await pollCount(client, { topic: t, group, max: 2 }, 2) };
    assert.equal(before.messages.length, 2);

    await client.close();
    assert.equal(await worker.stop(), 0, 'worker did not exit cleanly on SIGTERM');
    worker = await startWorker(env);
    client = clientFor(worker.address);

    const after = { messages: await pollCount(client, { topic: t, group, max: 2 }, 2) };
    const seen = [...before.messages, ...after.messages].map((m) => m.value).sort();
    assert.deepEqual(seen, ['r1', 'r2', 'r3', 'r4']);
    assert.equal((await poll(client, { topic: t, group, timeout_ms: 300 })).count, 0);
  });

  it('reads a backlog larger than its buffer, across a restart while the buffer is full: each message once, in partition order', async () => {
    const t = await topic(3);
    const group = uniqueName('backlog');
    // 1 KB records: one 2 MB fetch holds more than the buffer's 1000-message bound, so the
    // fetch loop has to wait for polls to make room and then pick up again by itself.
    const total = 3000;
    await produce(
      kafka.plaintext,
      t,
      Array.from({ length: total }, (_, i) => ({ key: `k${i % 32}`, value: `${i}:`.padEnd(1024, 'x') })),
    );
    const seen = await pollCount(client, { topic: t, group, max: 100 }, 100);
    assert.equal(seen.length, 100);
    // Let the consumer fill its buffer (its fetch loop is then held), then stop the worker:
    // it must still leave its group and exit, and the buffered, uncommitted messages go to
    // the next worker.
    // A fixed pause: the worker does not report when its buffer is full, so time stands in for it.
    await elapse(1000);
    await client.close();
    assert.equal(await worker.stop(), 0, 'worker did not exit cleanly on SIGTERM');
    worker = await startWorker(env);
    client = clientFor(worker.address);

    while (seen.length < total) {
      const next = await poll(client, { topic: t, group, max: 100 });
      assert.ok(next.count > 0, `the backlog stopped after ${seen.length} of ${total} messages`);
      seen.push(...next.messages);
    }
    assert.equal(seen.length, total);
    assert.equal(new Set(seen.map((m) => m.value)).size, total, 'a message was handed out twice');
    const ends: Record<number, string> = {};
    for (const partition of [0, 1, 2]) {
      const offsets = seen.filter((m) => m.partition === partition).map((m) => m.offset);
      assert.deepEqual(
        offsets,
        offsets.map((_, i) => i),
        `partition ${partition} out of order or with gaps`,
      );
      ends[partition] = String(offsets.length);
    }
    assert.equal((await poll(client, { topic: t, group, timeout_ms: 300 })).count, 0);
    assert.deepEqual(await groupOffsets(kafka.plaintext, group, t), ends);
  });

  it('explains a missing topic, group or default', async () => {
    const missing = uniqueName('missing');
    await assert.rejects(poll(client, { topic: missing, group: 'g' }), (e: unknown) => {
      assert.ok(e instanceof WorkerCallError && e.code === 'UNKNOWN_TOPIC');
      assert.match(e.message, /does not exist.*event_create_topic.*BROKER_ALLOW_TOPIC_ADMIN=true/s);
      return true;
    });
    await assert.rejects(
      client.call('publish', { topic: missing, value: 'x' }, { timeoutMs: 10_000 }),
      (e: unknown) => e instanceof WorkerCallError && e.code === 'UNKNOWN_TOPIC',
    );
    const t = await topic(1);
    await assert.rejects(
      client.call('consume', { topic: t, from: 'group', max: 1, timeout_ms: 100 }, { timeoutMs: 2000 }),
      (e: unknown) =>
        e instanceof WorkerCallError &&
        e.code === 'NO_DEFAULT_GROUP' &&
        /BROKER_CONSUMER_GROUP/.test(e.message),
    );
    await assert.rejects(
      client.call('publish', { value: 'x' }, { timeoutMs: 2000 }),
      (e: unknown) =>
        e instanceof WorkerCallError &&
        e.code === 'NO_DEFAULT_TOPIC' &&
        /BROKER_DEFAULT_TOPIC/.test(e.message),
    );
  });
});
