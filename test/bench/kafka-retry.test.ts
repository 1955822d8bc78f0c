/**
 * The bench's retry of retriable Kafka answers, with kafkajs's own error objects: the bench
 * once died on NOT_LEADER_FOR_PARTITION from fetchTopicOffsets on a topic created moments
 * before, an answer Kafka marks retriable.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { isRetriable, retryRetriable } from '../../bench/kafka-retry.ts';

// kafkajs spreads its error classes into module.exports, which Node's named-export detection misses.
const { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;
// kafkajs's table of protocol error codes, so the retriable flag is the one kafkajs maps, not ours.
const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode(code: number): { type: string; retriable: boolean; message: string };
};
const notLeader = () => new KafkaJSProtocolError(createErrorFromCode(6) as unknown as Error);
const notAuthorized = () => new KafkaJSProtocolError(createErrorFromCode(29) as unknown as Error);

test('fetchTopicOffsets answering not-the-leader is retried until the broker answers', async () => {
  assert.equal(notLeader().message, 'This server is not the leader for that topic-partition');
  let calls = 0;
  const retried: number[] = [];
  const offsets = await retryRetriable(
    async () => {
      calls += 1;
      if (calls < 3) throw notLeader();
      return [{ partition: 0, high: '5', low: '0' }];
    },
    { firstDelayMs: 1, onRetry: (_error, attempt) => retried.push(attempt) },
  );
  assert.deepEqual(offsets, [{ partition: 0, high: '5', low: '0' }]);
  assert.equal(calls, 3);
  assert.deepEqual(retried, [1, 2]);
});

test('a non-retriable answer is thrown at once', async () => {
  let calls = 0;
  await assert.rejects(
    retryRetriable(
      async () => {
        calls += 1;
        throw notAuthorized();
      },
      { firstDelayMs: 1 },
    ),
    { name: 'KafkaJSProtocolError', type: 'TOPIC_AUTHORIZATION_FAILED' },
  );
  assert.equal(calls, 1);
  assert.equal(isRetriable(new Error('plain')), false);
});

test('a retriable cause wrapped by kafkajs (retries exceeded) still counts as retriable', () => {
  const wrapped = new KafkaJSNumberOfRetriesExceeded(notLeader(), {
    retryCount: 5,
    retryTime: 100,
  } as never);
  assert.equal(wrapped.retriable, false);
  assert.equal(isRetriable(wrapped), true);
  assert.equal(isRetriable({ errors: [new Error('x'), notLeader()] }), true);
});

test('past the deadline the last retriable error is thrown, not swallowed', async () => {
  let calls = 0;
  await assert.rejects(
    retryRetriable(
      async () => {
        calls += 1;
        throw notLeader();
      },
      { deadlineMs: 0 },
    ),
    { type: 'NOT_LEADER_FOR_PARTITION' },
  );
  assert.equal(calls, 1);
});
