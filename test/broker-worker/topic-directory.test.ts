/** The topic directory's cache, against a fake admin client whose answers the test releases. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Admin, PartitionMetadata } from 'kafkajs';
import { MethodError } from '../../broker-worker/errors.ts';
import type { LazyConnection } from '../../broker-worker/kafka/lazy.ts';
import { TopicDirectory } from '../../broker-worker/kafka/topic-directory.ts';

type Metadata = { topics: Array<{ name: string; partitions: PartitionMetadata[] }> };

/** Each metadata request waits until the test answers it with the topics the cluster has. */
function fakeAdmin() {
  const requests: Array<(names: string[]) => void> = [];
  const admin = {
    fetchTopicMetadata: () =>
      new Promise<Metadata>((resolve) => {
        requests.push((names) =>
          resolve({ topics: names.map((name) => ({ name, partitions: [partition()] })) }),
        );
      }),
  };
  const connection = { get: async () => admin } as unknown as LazyConnection<Admin>;
  return { connection, requests };
}

function partition(): PartitionMetadata {
  return { partitionId: 0, leader: 1, replicas: [1], isr: [1], offlineReplicas: [], partitionErrorCode: 0 };
}

/** Whether `promise` settles before the event loop runs out of ready work. */
async function settlesNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('topic directory', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('answers a topic in steady use from the cache and refreshes it in the background', async () => {
    const { connection, requests } = fakeAdmin();
    const topics = new TopicDirectory(connection);
    const first = topics.requireExists('a');
    await new Promise((resolve) => setImmediate(resolve));
    requests[0]!(['a']);
    assert.equal((await first).length, 1);

    mock.timers.tick(6_000);
    const warm = topics.requireExists('a');
    assert.ok(await settlesNow(warm), 'a check waited for the refresh-ahead');
    assert.equal(requests.length, 2, 'no refresh was started ahead of expiry');

    requests[1]!(['a', 'b']);
    await new Promise((resolve) => setImmediate(resolve));
    // The background answer is now the cache: a topic it brought needs no request.
    assert.equal((await topics.requireExists('b')).length, 1);
    assert.equal(requests.length, 2);

    mock.timers.tick(11_000);
    const stale = topics.requireExists('a');
    assert.equal(await settlesNow(stale), false, 'metadata older than the bound was trusted');
    requests[2]!(['a']);
    assert.equal((await stale).length, 1);
  });

  it('does not let a refresh begun before invalidate() count as fresh', async () => {
    const { connection, requests } = fakeAdmin();
    const topics = new TopicDirectory(connection);
    const first = topics.requireExists('a');
    await new Promise((resolve) => setImmediate(resolve));
    requests[0]!(['a']);
    await first;

    mock.timers.tick(6_000);
    await topics.requireExists('a'); // starts a refresh ahead, still unanswered
    assert.equal(requests.length, 2);
    topics.invalidate(); // e.g. the topic was just deleted
    const after = topics.requireExists('a');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(requests.length, 3, 'the check joined a request sent before the invalidation');

    requests[1]!(['a']); // the old answer still lists the topic
    requests[2]!([]);
    await assert.rejects(after, (e: unknown) => e instanceof MethodError && e.code === 'UNKNOWN_TOPIC');
    // The old answer, arriving around the new one, did not bring the topic back.
    const again = topics.requireExists('a');
    await new Promise((resolve) => setImmediate(resolve));
    requests[3]?.([]);
    await assert.rejects(again, (e: unknown) => e instanceof MethodError && e.code === 'UNKNOWN_TOPIC');
  });
});
