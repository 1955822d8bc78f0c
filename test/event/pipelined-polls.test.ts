/**
 * Group polls pipelined on one connection whose client reads nothing for a while (as a
 * load tool with pipelining does). The node:http engine answers every one, in order, each
 * reported delivered once it reached the socket, so every message is handed out exactly
 * once. uWebSockets.js closes a connection on which a request arrives while an earlier
 * answer is still pending (docs/decisions/0011-pipelined-requests-on-uws.md): the
 * client must see the close rather than wait, and no message may be lost or handed out
 * twice, the unanswered polls' messages going back to the group.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTopic, produce, uniqueName } from '../broker-worker/support/kafka.ts';
import { ENGINES, engineSkip } from '../support/engines.ts';
import {
  type ConsumeData,
  callTool,
  type EventStack,
  joinGroup,
  startEventStack,
} from '../support/event-stack.ts';
import { elapse } from '../support/harness.ts';
import { answersIn } from '../support/http-answers.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
const MESSAGES = 1200;
const POLLS = 150;
/** Large enough that the answers exceed what the loopback socket buffers while the client is paused. */
const PADDING = 'x'.repeat(4000);

type Answer = { id: number; result?: { structuredContent?: ConsumeData } };

interface Outcome {
  answers: Answer[];
  closed: boolean;
}

/** Sends `count` polls in one write, reads nothing for 3 s, then reads until every answer came or the server closed. */
async function pipelinePolls(
  stack: EventStack,
  topic: string,
  group: string,
  count: number,
): Promise<Outcome> {
  const socket = connect(stack.gw.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  let requests = '';
  for (let id = 1; id <= count; id++) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'event_consume', arguments: { topic, group, max: 10, timeout_ms: 2000 } },
    });
    requests +=
      'POST /event/mcp HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n' +
      `accept: application/json, text/event-stream\r\nx-api-key: ${stack.gw.apiKey}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  }
  // Listening from the start: a close while the client reads nothing must not go unseen.
  const chunks: Buffer[] = [];
  const outcome = new Promise<Outcome>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const answers = answersIn<Answer>(Buffer.concat(chunks)).bodies;
      if (answers.length === count) resolve({ answers, closed: false });
    });
    socket.once('close', () =>
      resolve({ answers: answersIn<Answer>(Buffer.concat(chunks)).bodies, closed: true }),
    );
    socket.on('error', () => {});
  });
  socket.write(requests);
  await elapse(3000);
  socket.resume();
  const result = await outcome;
  socket.destroy();
  return result;
}

for (const engine of ENGINES) {
  describe(`pipelined group polls on the ${engine} engine`, { skip: engineSkip(engine) }, () => {
    let stack: EventStack;
    before(async () => {
      stack = await startEventStack(
        { BROKER_BOOTSTRAP_SERVERS: kafka.plaintext, BROKER_SECURITY_PROTOCOL: 'PLAINTEXT' },
        { engine },
      );
    });
    after(() => stack.close());

    it('no answer is waited for in vain, and no message is lost or handed out twice', {
      timeout: 180_000,
    }, async () => {
      const topic = uniqueName('pipelined');
      const group = uniqueName('pipelined-group');
      await createTopic(kafka.plaintext, topic, 1);
      const client = await stack.mcp();
      // Join the group first, so the pipelined polls find messages rather than a join in progress.
      await joinGroup(client, topic, group);
      // In batches well under the broker's 1 MB request limit.
      for (let from = 0; from < MESSAGES; from += 100) {
        const batch = Array.from({ length: 100 }, (_, i) => ({ value: `m${from + i}:${PADDING}` }));
        await produce(kafka.plaintext, topic, batch);
      }

      const { answers, closed } = await pipelinePolls(stack, topic, group, POLLS);
      if (engine === 'node') {
        assert.equal(closed, false, 'the connection closed before every answer came');
        assert.deepEqual(
          answers.map((answer) => answer.id),
          Array.from({ length: POLLS }, (_, i) => i + 1),
        );
      } else {
        assert.equal(closed, true, 'uWS answered pipelined polls: this test and the docs need updating');
      }

      const seen = new Map<string, number>();
      const count = (messages: ConsumeData['messages']) => {
        for (const message of messages) {
          const id = String(message.value).split(':')[0]!;
          seen.set(id, (seen.get(id) ?? 0) + 1);
        }
      };
      for (const answer of answers) count(answer.result?.structuredContent?.messages ?? []);
      // What the pipelined polls did not hand out is read the ordinary way.
      for (let empty = 0; empty < 2; ) {
        const poll = await callTool<ConsumeData>(client, 'event_consume', {
          topic,
          group,
          max: 100,
          timeout_ms: 1500,
        });
        assert.equal(poll.isError, false, poll.text);
        count(poll.data.messages);
        empty = poll.data.count === 0 ? empty + 1 : 0;
      }
      const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
      assert.deepEqual(twice, [], 'an answer that reached the client was rewound and handed out again');
      assert.equal(seen.size, MESSAGES);
    });
  });
}
