/** The worker is a separate process: while it is down the gateway answers quickly and honestly; when it is back the group resumes. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
const topic = uniqueName('restart');
const group = uniqueName('restart-group');
let stack: EventStack;

before(async () => {
  await createTopic(kafka.plaintext, topic, 2);
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_DEFAULT_TOPIC: topic,
    BROKER_CONSUMER_GROUP: group,
  });
});
after(() => stack.close());

test('worker down: tools fail fast saying so, capabilities still answers; back up: the group resumes where it left off', async () => {
  const client = await stack.mcp();
  for (let i = 0; i < 6; i++) await callTool(client, 'event_publish', { value: `job-${i}`, key: `k${i}` });
  const firstBatch = await callTool<ConsumeData>(client, 'event_consume', { max: 3, timeout_ms: 5000 });
  assert.equal(firstBatch.isError, false, firstBatch.text);
  assert.equal(firstBatch.data.count, 3);

  await stack.stopWorker();

  // Unreachable, not a deadline error: the call did not wait out its 15 s budget.
  const down = await callTool(client, 'event_publish', { value: 'while-down' });
  assert.equal(down.isError, true);
  assert.match(down.text, /broker worker/i);
  assert.match(down.text, /unreachable/i);

  const caps = await callTool<{ ready: boolean; details: { worker: { reachable: boolean } } }>(
    client,
    'event_capabilities',
  );
  assert.equal(caps.isError, false);
  assert.equal(caps.data.ready, false);
  assert.equal(caps.data.details.worker.reachable, false);

  await stack.restartWorker();
  const rest: ConsumeData['messages'] = [];
  let reconnected = false;
  await waitFor(
    async () => {
      const poll = await callTool<ConsumeData>(client, 'event_consume', { max: 10, timeout_ms: 5000 });
      if (!poll.isError) {
        reconnected = true;
        rest.push(...poll.data.messages);
      }
      return rest.length >= 3;
    },
    {
      what: 'polls after the worker restart to return the remaining three messages',
      timeoutMs: 60_000,
      intervalMs: 100,
    },
  );
  assert.ok(reconnected, 'the gateway reconnected to the restarted worker');
  const all = [...firstBatch.data.messages, ...rest].map((m) => m.value).sort();
  assert.deepEqual(all, ['job-0', 'job-1', 'job-2', 'job-3', 'job-4', 'job-5']);

  const capsAfter = await callTool<{ ready: boolean }>(client, 'event_capabilities');
  assert.equal(capsAfter.data.ready, true);
});
