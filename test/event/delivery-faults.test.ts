/**
 * At-least-once delivery end to end (MCP client -> gateway -> worker -> real Kafka): polls
 * answer as soon as there is work, a repeated poll returns only new messages, and kill -9
 * of the worker while several pollers consume never loses a message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createTopic,
  groupOffsets,
  groupState,
  produce,
  uniqueName,
} from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
import { elapse, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
let stack: EventStack;

before(async () => {
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    // The shortest session the worker allows: a killed worker's partitions move soonest.
    BROKER_SESSION_TIMEOUT_MS: '6000',
  });
});
after(() => stack.close());

async function freshTopic(partitions: number): Promise<string> {
  const topic = uniqueName('delivery');
  await createTopic(kafka.plaintext, topic, partitions);
  return topic;
}

describe('group polls through the gateway', () => {
  it('one waiting message comes back at once, not after timeout_ms', async () => {
    const client = await stack.mcp();
    const topic = await freshTopic(1);
    const group = uniqueName('linger');
    // Join first, so the poll below measures waiting for work, not the group join.
    await callTool(client, 'event_consume', { topic, group, timeout_ms: 3000 });
    await produce(kafka.plaintext, topic, [{ value: 'only-one' }]);
    const poll = callTool<ConsumeData>(client, 'event_consume', {
      topic,
      group,
      max: 10,
      timeout_ms: 30_000,
    });
    // The test's own budget is half the poll's timeout: a poll that waited for max or for
    // its timeout would lose the race. Elapsed time is the point here.
    const outcome = await Promise.race([poll, elapse(15_000).then(() => 'held until the timeout' as const)]);
    assert.notEqual(outcome, 'held until the timeout');
    if (typeof outcome === 'string') return;
    assert.equal(outcome.isError, false, outcome.text);
    assert.equal(outcome.data.count, 1);
    assert.equal(outcome.data.messages[0]!.value, 'only-one');
  });

  it('a repeated call returns only new messages, and the delivered ones get committed', async () => {
    const client = await stack.mcp();
    const topic = await freshTopic(1);
    const group = uniqueName('repeat');
    await produce(kafka.plaintext, topic, [{ value: 'a' }, { value: 'b' }]);
    const seen: string[] = [];
    while (seen.length < 2) {
      const poll = await callTool<ConsumeData>(client, 'event_consume', { topic, group, max: 2 });
      assert.equal(poll.isError, false, poll.text);
      assert.ok(poll.data.count > 0, 'a waiting message was not returned');
      seen.push(...poll.data.messages.map((m) => m.value!));
    }
    assert.deepEqual(seen, ['a', 'b']);
    const again = await callTool<ConsumeData>(client, 'event_consume', { topic, group, timeout_ms: 300 });
    assert.equal(again.data.count, 0);
    // The commit follows the written answer by a few milliseconds.
    let committed = '';
    await waitFor(
      async () => {
        committed = (await groupOffsets(kafka.plaintext, group, topic))[0] ?? '';
        return committed === '2';
      },
      { what: "the group's committed offset to reach 2", timeoutMs: 5000, intervalMs: 100 },
    );
    assert.equal(committed, '2');
  });

  it('a poll cut by a worker crash says nothing was committed for it', async () => {
    const client = await stack.mcp();
    const topic = await freshTopic(1);
    const group = uniqueName('cut');
    const poll = callTool(client, 'event_consume', { topic, group, timeout_ms: 20_000 });
    await waitFor(async () => (await groupState(kafka.plaintext, group)).members > 0, {
      what: `the poll's consumer to join group ${group}`,
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    await stack.worker.kill();
    const outcome = await poll;
    assert.equal(outcome.isError, true);
    assert.match(outcome.text, /broke while this poll was running/);
    assert.match(outcome.text, /Nothing was committed for this poll/);
    assert.match(outcome.text, /Poll again/);
    await stack.restartWorker();
  });

  it('kill -9 of the worker while several pollers consume: every message is delivered (none lost)', async () => {
    const topic = await freshTopic(3);
    const group = uniqueName('faults');
    const total = 600;
    await produce(
      kafka.plaintext,
      topic,
      Array.from({ length: total }, (_, i) => ({ key: `k${i % 17}`, value: `m${i}` })),
    );
    const delivered = new Map<string, number>();
    const clients = await Promise.all(Array.from({ length: 4 }, () => stack.mcp()));
    let stop = false;
    const pollers = clients.map(async (client) => {
      while (!stop && delivered.size < total) {
        const poll = await callTool<ConsumeData>(client, 'event_consume', {
          topic,
          group,
          max: 5,
          timeout_ms: 2000,
        }).catch(() => null);
        if (!poll || poll.isError) {
          // A back-off between failed polls while the worker restarts, not a wait for a condition.
          await elapse(200);
          continue;
        }
        for (const m of poll.data.messages) delivered.set(m.value!, (delivered.get(m.value!) ?? 0) + 1);
      }
    });
    const kills = 3;
    try {
      for (let k = 0; k < kills; k++) {
        // Let some polls succeed, then kill the worker in the middle of them.
        const target = Math.floor((total * (k + 1)) / (kills + 2));
        await waitFor(() => delivered.size >= target, {
          what: () => `${target} messages delivered before kill ${k + 1} (have ${delivered.size})`,
          timeoutMs: 60_000,
        });
        await stack.worker.kill();
        await stack.restartWorker();
      }
      await waitFor(() => delivered.size >= total, {
        what: () => `all ${total} messages delivered (have ${delivered.size})`,
        timeoutMs: 90_000,
      });
    } finally {
      stop = true;
      await Promise.all(pollers);
    }
    const never = Array.from({ length: total }, (_, i) => `m${i}`).filter((v) => !delivered.has(v));
    assert.deepEqual(never, [], `${never.length} of ${total} messages were never delivered`);
  });
});
