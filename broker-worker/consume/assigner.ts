/**
 * Partition assignment that honours each member's own subscription.
 *
 * The worker runs one consumer per (group, topic), so one group can have members that
 * subscribe to different topics. kafkajs's bundled round-robin assigner hands every member
 * partitions of every topic the leader subscribes to, and kafkajs then silently drops
 * partitions of topics a member did not subscribe to: those partitions would never be
 * read. This assigner gives each topic's partitions only to the members subscribed to it.
 *
 * It uses the standard ConsumerProtocol v0 encodings under the protocol name "roundrobin"
 * (the name of Java's subscription-aware RoundRobinAssignor), so a Java consumer configured
 * with RoundRobinAssignor can share a group with the worker.
 */
import { AssignerProtocol, type GroupMemberAssignment, type PartitionAssigner } from 'kafkajs';

const SUBSCRIPTION_ROUND_ROBIN = 'roundrobin';

/** Pure assignment: member id -> topic -> partitions. Exported for tests. */
export function assignBySubscription(
  subscriptions: ReadonlyArray<{ memberId: string; topics: readonly string[] }>,
  partitionsOf: (topic: string) => number[],
): Map<string, Record<string, number[]>> {
  const result = new Map<string, Record<string, number[]>>();
  for (const { memberId } of subscriptions) result.set(memberId, {});
  const topics = [...new Set(subscriptions.flatMap((s) => s.topics))].sort();
  // A running cursor spreads the first partition of each topic over different members.
  let cursor = 0;
  for (const topic of topics) {
    const members = subscriptions
      .filter((s) => s.topics.includes(topic))
      .map((s) => s.memberId)
      .sort();
    if (members.length === 0) continue;
    const partitions = [...partitionsOf(topic)].sort((a, b) => a - b);
    for (const partition of partitions) {
      const member = members[cursor % members.length]!;
      cursor += 1;
      const own = result.get(member)!;
      const list = own[topic] ?? [];
      list.push(partition);
      own[topic] = list;
    }
  }
  return result;
}

export const subscriptionRoundRobin: PartitionAssigner = ({ cluster }) => ({
  name: SUBSCRIPTION_ROUND_ROBIN,
  version: 0,
  async assign({ members }): Promise<GroupMemberAssignment[]> {
    const subscriptions = members.map((member) => ({
      memberId: member.memberId,
      topics: AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.topics ?? [],
    }));
    // The leader's metadata only covers its own topics; load the others' too.
    const allTopics = [...new Set(subscriptions.flatMap((s) => s.topics))];
    await cluster.addMultipleTargetTopics(allTopics);
    const plan = assignBySubscription(subscriptions, (topic) =>
      cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId),
    );
    return [...plan].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment,
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: SUBSCRIPTION_ROUND_ROBIN,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    };
  },
});
