/**
 * A poll's answer speaks only of its own call. Caller A's warm group consumer fails (its
 * topic is deleted under it, and the broker's error names A's topic and group). Caller
 * B's polls on another topic and group that run out of time must not quote it: neither
 * the worker's own deadline answer, nor what the MCP caller reads through the gateway,
 * nor the worker status every key can read through event_capabilities.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { parseEndpoint } from '../../shared/ipc/endpoint.ts';
import { createTopic, uniqueName, withAdmin } from '../broker-worker/support/kafka.ts';
import {
  type ConsumeData,
  callTool,
  type EventStack,
  joinGroup,
  startEventStack,
} from '../support/event-stack.ts';
import { waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
let stack: EventStack;
/** Waits for the worker's own answer however late it is, so its deadline error is what comes back. */
let patient: BrokerWorkerClient;

before(async () => {
  stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
  patient = new BrokerWorkerClient({
    workers: [parseEndpoint(stack.worker.address)],
    link: { replyGraceMs: 60_000 },
  });
});
after(async () => {
  await patient?.close();
  await stack?.close();
});

it("a poll that runs out of time names nothing of another caller's failing topic or group", {
  timeout: 240_000,
}, async () => {
  const topicA = uniqueName('isolation-a');
  const groupA = uniqueName('isolation-group-a');
  const groupB = uniqueName('isolation-group-b');
  await createTopic(kafka.plaintext, topicA, 1);
  const callerA = await stack.mcp();
  const callerB = await stack.mcp();
  await joinGroup(callerA, topicA, groupA);
  await withAdmin(kafka.plaintext, (admin) => admin.deleteTopics({ topics: [topicA] }));

  const namesA = (text: string) => text.includes(topicA) || text.includes(groupA);
  // A's consumer hits the broker's error for its deleted topic (the worker logs it, naming
  // A's topic and group). Every check below runs after that, while A's consumer keeps
  // failing.
  const waitForAsFailure = () =>
    waitFor(
      () =>
        stack.worker.lines.some((line) => line.includes('group consumer crashed') && line.includes(groupA)),
      { what: "A's consumer to fail (the premise of this test)", timeoutMs: 60_000 },
    );

  const outcomes: string[] = [];
  for (let round = 0; round < 3; round++) {
    await waitForAsFailure();
    // A topic the worker has not listed yet, so the poll waits on a metadata refresh, and a
    // deadline of 0 ms: the worker's deadline passes during that refresh, and the poll
    // answers with the worker's own DEADLINE_EXCEEDED.
    const topicB = uniqueName('isolation-b');
    await createTopic(kafka.plaintext, topicB, 1);
    await waitForAsFailure();
    const outcome = await patient
      .call(
        'consume',
        { topic: topicB, group: groupB, from: 'group', max: 10, timeout_ms: 1000 },
        {
          timeoutMs: 0,
        },
      )
      .then(
        (result) => `result: ${JSON.stringify(result)}`,
        (error: { code?: string; message?: string }) => `error ${error.code}: ${error.message}`,
      );
    outcomes.push(outcome);
    assert.match(outcome, /^error DEADLINE_EXCEEDED: The consume call did not finish within 0 ms/);
    assert.equal(namesA(outcome), false, `B's poll quoted A's topic or group:\n${outcome}`);
    // What any key reads through event_capabilities names nothing of A either.
    const status = await patient.call('status', {}, { timeoutMs: 2000 });
    assert.equal(namesA(JSON.stringify(status)), false, JSON.stringify(status));

    // The same through the gateway, as an MCP caller sees it.
    const viaGateway = await callTool<ConsumeData>(callerB, 'event_consume', {
      topic: topicB,
      group: groupB,
      timeout_ms: 200,
    });
    assert.equal(namesA(viaGateway.text), false, `B's poll quoted A's topic or group:\n${viaGateway.text}`);
  }
  assert.equal(outcomes.length, 3);
});
