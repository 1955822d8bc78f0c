/**
 * Group polls at the edges of their arguments, through the whole stack: `timeout_ms: 0`
 * answers at once with what is ready (not an empty answer while messages wait), a `max`
 * past the cap hands out 100, `max: 1` exactly one, and across those answers every
 * message is handed out once and committed once delivered. Real gateway, real worker
 * process, real Kafka.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTopic, groupOffsets, produce, uniqueName } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
const MESSAGES = 150;
let stack: EventStack;

before(async () => {
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
});
after(() => stack.close());

it('timeout_ms 0 and max at its edges hand out every waiting message once', async () => {
  const topic = uniqueName('edges');
  const group = uniqueName('edges-group');
  await createTopic(kafka.plaintext, topic, 1);
  const client = await stack.mcp();
  const poll = async (args: Record<string, unknown>) => {
    const answer = await callTool<ConsumeData & { joining?: boolean }>(client, 'event_consume', {
      topic,
      group,
      ...args,
    });
    assert.equal(answer.isError, false, answer.text);
    return answer.data;
  };
  for (let joined = false; !joined; ) joined = (await poll({ timeout_ms: 1000 })).joining !== true;
  await produce(
    kafka.plaintext,
    topic,
    Array.from({ length: MESSAGES }, (_, i) => ({ value: `m${i}` })),
  );
  await waitFor(
    async () => {
      const status = await stack.brokerClient.call('status', {}, { timeoutMs: 5000 });
      return status.bufferedMessages === MESSAGES ? true : undefined;
    },
    { what: `all ${MESSAGES} messages to be fetched`, timeoutMs: 20_000, intervalMs: 50 },
  );

  const offsets = (data: ConsumeData) => data.messages.map((m) => m.offset);
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
  // Far past the cap of 100, with no time to wait: the first 100, at once.
  assert.deepEqual(offsets(await poll({ max: 1_000_000_000, timeout_ms: 0 })), range(0, 100));
  assert.deepEqual(offsets(await poll({ max: 1, timeout_ms: 0 })), [100]);
  assert.deepEqual(offsets(await poll({ max: 100, timeout_ms: 0 })), range(101, MESSAGES));
  assert.equal((await poll({ timeout_ms: 0 })).count, 0);
  await waitFor(
    async () =>
      (await groupOffsets(kafka.plaintext, group, topic))[0] === String(MESSAGES) ? true : undefined,
    { what: 'every delivered answer to be committed', timeoutMs: 10_000, intervalMs: 100 },
  );
});
