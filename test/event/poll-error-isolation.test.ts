/**
 * A poll's answer speaks only of its own call. Caller A's warm group consumer fails (its
 * topic is deleted under it), and the worker keeps that failure, naming A's topic and
 * group, as its latest broker error. Caller B's polls on another topic and group that run
 * out of time must not quote it: neither the worker's own deadline answer nor what the
 * MCP caller reads through the gateway.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { parseEndpoint } from '../../shared/ipc/endpoint.ts';
import { createTopic, uniqueName, withAdmin } from '../broker-worker/support/kafka.ts';
import { type ConsumeData, callTool, type EventStack, startEventStack } from '../support/event-stack.ts';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("a poll that runs out of time names nothing of another caller's failing topic or group", {
  timeout: 240_000,
}, async () => {
  const topicA = uniqueName('isolation-a');
  const groupA = uniqueName('isolation-group-a');
  const groupB = uniqueName('isolation-group-b');
  await createTopic(kafka.plaintext, topicA, 1);
  const callerA = await stack.mcp();
  const callerB = await stack.mcp();
  for (let joined = false; !joined; ) {
    const poll = await callTool<ConsumeData & { joining?: boolean }>(callerA, 'event_consume', {
      topic: topicA,
      group: groupA,
      timeout_ms: 1000,
    });
    assert.equal(poll.isError, false, poll.text);
    joined = poll.data.joining !== true;
  }
  await withAdmin(kafka.plaintext, (admin) => admin.deleteTopics({ topics: [topicA] }));

  const namesA = (text: string) => text.includes(topicA) || text.includes(groupA);
  const waitForAsFailure = async () => {
    for (let attempt = 0; attempt < 1200; attempt++) {
      const status = await patient.call('status', {}, { timeoutMs: 2000 });
      if (namesA(status.lastBrokerError?.message ?? '')) return;
      await sleep(50);
    }
    assert.fail("the worker never reported A's consumer failure; the premise of this test did not occur");
  };

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
