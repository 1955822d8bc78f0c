/**
 * Creating topics and waiting until every partition has a leader.
 *
 * kafkajs's own `waitForLeaders` retries only LEADER_NOT_AVAILABLE. A broker that has not yet
 * applied the controller's record for a new topic answers UNKNOWN_TOPIC_OR_PARTITION instead
 * (seen on a one-node KRaft cluster under load), and kafkajs then reports the creation as
 * failed although the topic exists. Here both answers mean "not yet".
 */
import type { Admin, ITopicConfig } from 'kafkajs';
import { isUnknownTopic } from './errors.ts';

const POLL_MS = 100;

function isLeaderPending(error: unknown): boolean {
  return (
    isUnknownTopic(error) ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { type?: string }).type === 'LEADER_NOT_AVAILABLE')
  );
}

/** True when every named topic is in the metadata with a leader for each partition. */
async function leadersKnown(admin: Admin, topics: string[]): Promise<boolean> {
  try {
    const { topics: found } = await admin.fetchTopicMetadata({ topics });
    return (
      found.length === topics.length &&
      found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
    );
  } catch (error) {
    if (isLeaderPending(error)) return false;
    throw error;
  }
}

/**
 * Creates the topics (false when they all exist already, as kafkajs answers) and waits for
 * their leaders, both within `timeoutMs`. Past that the topics still exist; producers and consumers
 * retry until the leaders are elected, so the wait running out is not a failure.
 */
export async function createTopicsAndWait(
  admin: Admin,
  topics: ITopicConfig[],
  timeoutMs = 10_000,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  const created = await admin.createTopics({ topics, waitForLeaders: false, timeout: timeoutMs });
  if (!created) return false;
  const names = topics.map((t) => t.topic);
  while (!(await leadersKnown(admin, names)) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}
