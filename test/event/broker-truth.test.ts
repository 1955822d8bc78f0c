/**
 * Diagnostics that tell the truth: a new group's first poll that ends while the group is
 * still joining says so, and event_capabilities stops saying ready within seconds of the
 * broker going away. This file starts its own broker (default 3000 ms rebalance delay) so
 * it can stop it.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LocalKafka } from '../../dev/kafka/local-kafka.ts';
import { type PrivateKafka, startPrivateKafka } from '../../dev/kafka/private-kafka.ts';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
import { waitFor } from '../support/harness.ts';

let broker: PrivateKafka | undefined;
let kafka: LocalKafka;
let stack: EventStack;

before(async () => {
  broker = await startPrivateKafka(3000, { shortLived: true });
  kafka = broker.kafka;
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
});
after(async () => {
  await stack?.close();
  await broker?.cleanup();
});

interface Caps {
  ready: boolean;
  details: {
    broker: { reachable: boolean | null; lastBrokerError: { message: string } | null } | null;
  };
}

it('a new group whose first poll ends while still joining says joining, not just count 0', async () => {
  const client = await stack.mcp();
  const topic = uniqueName('joining');
  await createTopic(kafka.plaintext, topic, 1);
  const poll = await callTool<ConsumeData & { joining?: boolean; hint?: string }>(client, 'event_consume', {
    topic,
    group: uniqueName('new-group'),
    timeout_ms: 500,
  });
  assert.equal(poll.isError, false, poll.text);
  assert.equal(poll.data.count, 0);
  assert.equal(poll.data.joining, true);
  assert.match(poll.data.hint ?? '', /still joining.*Poll again/s);
});

it('event_capabilities stops saying ready within seconds of the broker stopping', async () => {
  const client = await stack.mcp();
  let caps = await waitFor(
    async () => {
      const now = (await callTool<Caps>(client, 'event_capabilities')).data;
      return now.details.broker?.reachable === true ? now : undefined;
    },
    { what: 'event_capabilities to report the broker reachable', timeoutMs: 10_000, intervalMs: 100 },
  );
  assert.equal(caps.ready, true);
  assert.equal(caps.details.broker?.reachable, true);

  await kafka.stop();
  // The worker probes every 2 s; the loop's budget is 30 s.
  caps = await waitFor(
    async () => {
      const now = (await callTool<Caps>(client, 'event_capabilities')).data;
      return now.ready ? undefined : now;
    },
    { what: 'event_capabilities to stop saying ready', timeoutMs: 30_000, intervalMs: 100 },
  );
  assert.equal(caps.ready, false);
  assert.equal(caps.details.broker?.reachable, false);
  assert.match(caps.details.broker?.lastBrokerError?.message ?? '', /does not answer/);
  // The previous test's group is still polling the stopped broker; its topic and group are that
  // caller's business, and every key can read event_capabilities.
  assert.doesNotMatch(JSON.stringify(caps), /joining-|new-group-/);
});
