/**
 * Publishes through both gateways of a fleet (test/support/fleet.ts) while a fault strikes,
 * then reads the topic from the start as the witness: an acknowledged publish missing from
 * it is lost, a value in it twice is a duplicate (a retried send).
 */
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import type { Fleet } from './fleet.ts';

export interface PublishRunOptions {
  fleet: Fleet;
  bootstrap: string;
  topic: string;
  messages: number;
  /** Publishes in flight at once, alternating gateways. Default 8. */
  concurrency?: number;
  /** Strikes once this share (0..1) of the messages was acknowledged. */
  at: number;
  fault(topic: string): Promise<void>;
  log?: (line: string) => void;
}

export interface PublishReport {
  acknowledged: number;
  lost: number;
  duplicated: number;
  /** Publishes answered with an error. */
  unanswered: number;
  /** Longest time between two acknowledgements, in ms. */
  longestPauseMs: number;
  /** Publishes were acknowledged again after the fault, with nobody stepping in. */
  recovered: boolean;
}

/** Every value in the topic, read from the start (counts, so duplicates show). */
export async function topicValues(bootstrap: string, topic: string): Promise<Map<string, number>> {
  const kafka = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const values = new Map<string, number>();
  if (total === 0) return values;
  const reader = kafka.consumer({ groupId: `witness-${topic}-${Date.now()}` });
  await reader.connect();
  await reader.subscribe({ topic, fromBeginning: true });
  let records = 0;
  await new Promise<void>((resolve) => {
    void reader.run({
      eachMessage: async ({ message }) => {
        const value = message.value?.toString() ?? '';
        values.set(value, (values.get(value) ?? 0) + 1);
        records += 1;
        if (records >= total) resolve();
      },
    });
  });
  await reader.disconnect();
  return values;
}

export async function publishUnderFault(options: PublishRunOptions): Promise<PublishReport> {
  const { fleet, topic } = options;
  const log = options.log ?? (() => {});
  const admin = new Kafka({ brokers: options.bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createTopicsAndWait(admin, [{ topic, numPartitions: 3, replicationFactor: 3 }]);
  await admin.disconnect();

  const acknowledged = new Set<string>();
  let next = 0;
  let unanswered = 0;
  let lastAckAt = Date.now();
  let longestPauseMs = 0;
  let faultAt: number | null = null;
  let acksAfterFault = 0;
  let fault: Promise<void> | null = null;

  async function publisher(index: number): Promise<void> {
    for (let n = next++; n < options.messages; n = next++) {
      const value = `p-${n}`;
      const answer = await fleet.call(index % fleet.gateways.length, 'event_publish', {
        topic,
        value,
        key: value,
      });
      if (!answer.ok) {
        unanswered += 1;
        continue;
      }
      const now = Date.now();
      longestPauseMs = Math.max(longestPauseMs, now - lastAckAt);
      lastAckAt = now;
      acknowledged.add(value);
      if (faultAt !== null && now > faultAt) acksAfterFault += 1;
      if (fault === null && acknowledged.size >= options.at * options.messages) {
        faultAt = Date.now();
        fault = options.fault(topic);
      }
    }
  }

  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, (_, i) => publisher(i)));
  await fault;
  log(`${acknowledged.size} of ${options.messages} publishes acknowledged; reading the topic`);
  const inTopic = await topicValues(options.bootstrap, topic);
  let duplicated = 0;
  for (const count of inTopic.values()) duplicated += count - 1;
  return {
    acknowledged: acknowledged.size,
    lost: [...acknowledged].filter((value) => !inTopic.has(value)).length,
    duplicated,
    unanswered,
    longestPauseMs,
    recovered: acksAfterFault > 0,
  };
}
