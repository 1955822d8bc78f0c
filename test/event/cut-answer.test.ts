/**
 * A poll answer too large for the socket to take at once, whose client resets the
 * connection without reading it: the answer never reached the caller's connection, so on
 * both HTTP engines its messages must be handed out again, not committed. (An answer the
 * socket took in full counts as delivered: docs/event.md, known limits.) Real gateway,
 * real worker process, real Kafka.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTopic, groupOffsets, uniqueName } from '../broker-worker/support/kafka.ts';
import { ENGINES, engineSkip } from '../support/engines.ts';
import {
  type ConsumeData,
  callTool,
  type EventStack,
  joinGroup,
  startEventStack,
} from '../support/event-stack.ts';
import { elapse, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
const MESSAGES = 90;
/**
 * 90 KB each: the answer carries them twice (text and structuredContent), some 16 MB,
 * well past what loopback buffers hold for a client that reads nothing (the send buffer
 * grows to tcp_wmem's 4 MB at most, the receive window does not grow without reads).
 */
const PADDING = 'x'.repeat(90 * 1024);

/** Sends one poll on a raw connection, reads nothing, and resets the connection later. */
async function pollAndVanish(stack: EventStack, topic: string, group: string): Promise<void> {
  const socket = connect(stack.gw.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.on('error', () => {});
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'event_consume', arguments: { topic, group, max: 100, timeout_ms: 5000 } },
  });
  socket.write(
    'POST /event/mcp HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n' +
      `accept: application/json, text/event-stream\r\nx-api-key: ${stack.gw.apiKey}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  // The poll has taken the messages once the worker holds none of them buffered.
  await waitFor(
    async () => {
      const status = await stack.brokerClient.call('status', {}, { timeoutMs: 5000 });
      return status.bufferedMessages === 0 ? true : undefined;
    },
    { what: 'the poll to take the messages', timeoutMs: 20_000, intervalMs: 50 },
  );
  // A fixed pause: nothing outside the gateway shows that it is writing the answer.
  await elapse(500);
  socket.resetAndDestroy();
}

for (const engine of ENGINES) {
  describe(`a poll answer cut by its client on the ${engine} engine`, { skip: engineSkip(engine) }, () => {
    let stack: EventStack;
    before(async () => {
      stack = await startEventStack(
        { BROKER_BOOTSTRAP_SERVERS: kafka.plaintext, BROKER_SECURITY_PROTOCOL: 'PLAINTEXT' },
        { engine },
      );
    });
    after(() => stack.close());

    it('is handed out again in full, and committed only once delivered', async () => {
      const topic = uniqueName('cut');
      const group = uniqueName('cut-group');
      await createTopic(kafka.plaintext, topic, 1);
      const client = await stack.mcp();
      // Joined first, so the messages are fetched and waiting when the poll comes.
      await joinGroup(client, topic, group);
      for (let i = 0; i < MESSAGES; i++)
        await stack.brokerClient.call('publish', { topic, value: `m${i}:${PADDING}` }, { timeoutMs: 15_000 });
      await waitFor(
        async () => {
          const status = await stack.brokerClient.call('status', {}, { timeoutMs: 5000 });
          return status.bufferedMessages === MESSAGES ? true : undefined;
        },
        { what: `all ${MESSAGES} messages to be fetched`, timeoutMs: 30_000, intervalMs: 50 },
      );

      await pollAndVanish(stack, topic, group);

      // Had the cut answer counted as delivered, its messages would be committed and never come back.
      const again: string[] = [];
      for (let round = 0; round < 5 && again.length < MESSAGES; round++) {
        const poll = await callTool<ConsumeData>(client, 'event_consume', {
          topic,
          group,
          max: 100,
          timeout_ms: 3000,
        });
        assert.equal(poll.isError, false, poll.text);
        again.push(...poll.data.messages.map((m) => String(m.value).split(':')[0]!));
      }
      assert.deepEqual(
        again,
        Array.from({ length: MESSAGES }, (_, i) => `m${i}`),
      );
      await waitFor(
        async () =>
          (await groupOffsets(kafka.plaintext, group, topic))[0] === String(MESSAGES) ? true : undefined,
        { what: 'the delivered answers to be committed', timeoutMs: 10_000, intervalMs: 100 },
      );
    });
  });
}
