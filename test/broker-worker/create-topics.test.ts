/**
 * Creating topics and waiting for their leaders, against the real local Kafka. A broker that
 * has not yet applied a new topic's record answers "does not host this topic-partition";
 * kafkajs's own leader wait gives up on that answer although the topic was created.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import { testKafka } from '../support/kafka-env.ts';
import { uniqueName, withAdmin } from './support/kafka.ts';

const kafka = testKafka();

describe('createTopicsAndWait', () => {
  // Eight at once. On a broker with both JIT tiers (what `npm run kafka -- start` runs),
  // kafkajs's createTopics({ waitForLeaders: true }) with a 2.5 s timeout failed 28 of 48 of
  // these; on the test run's C1-only broker the race is rare (it failed one CI run). The wait
  // here is generous so that a loaded machine electing leaders slowly is not mistaken for it.
  it('creates topics eight at a time, each returned only when every partition has a leader', async () => {
    const names = Array.from({ length: 48 }, (_, i) => uniqueName(`burst-${i}`));
    await withAdmin(kafka.plaintext, async (admin) => {
      for (let start = 0; start < names.length; start += 8) {
        await Promise.all(
          names.slice(start, start + 8).map(async (topic) => {
            const created = await createTopicsAndWait(
              admin,
              [{ topic, numPartitions: 4, replicationFactor: 1 }],
              30_000,
            );
            assert.equal(created, true);
            const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
            assert.equal(meta?.partitions.length, 4);
            assert.ok(
              meta.partitions.every((p) => p.leader >= 0),
              `${topic} has a partition without a leader`,
            );
          }),
        );
      }
    });
  });

  it('answers false for a topic that exists, as kafkajs does', async () => {
    const topic = uniqueName('again');
    await withAdmin(kafka.plaintext, async (admin) => {
      assert.equal(
        await createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]),
        true,
      );
      assert.equal(
        await createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]),
        false,
      );
    });
  });
});
