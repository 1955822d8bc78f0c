/**
 * The event rows on a three-broker cluster, as a fleet runs them: topics with replication
 * factor 3 and min.insync.replicas=2, so every acknowledged publish (the worker's producer
 * and the kafkajs baseline both send with acks=all) waits for a second replica. The cluster
 * is started by the project's own dev/kafka code in a temporary data dir and stopped after.
 *
 * Two measurements, each beside kafkajs on the same cluster in the same run:
 * - event_publish at c1 and c64 (benchPublish, as on one broker) against producer.send;
 * - group polls: event_consume through one group until a preloaded topic is drained, against
 *   a kafkajs consumer group committing after each batch (at least once, as the gateway is).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { type LocalKafka, PRIVATE_CLUSTER, startLocalKafka } from '../dev/kafka/local-kafka.ts';
import {
  benchPublish,
  brokerList,
  createTopic,
  type PublishRow,
  type Stack,
  startStack,
  type TopicReplication,
} from './event.ts';
import { retryRetriable } from './kafka-retry.ts';
import { callTool } from './mcp-call.ts';
import { percentile } from './stats.ts';

export const CLUSTER_REPLICATION: TopicReplication = { replicationFactor: 3, minInsyncReplicas: 2 };
const PARTITIONS = 3;
const POLL_MAX = 100;

export interface GroupPollRow {
  messages: number;
  /** event_consume through one group, max 100 a poll, one caller. */
  pollsPerSecond: number;
  messagesPerSecond: number;
  pollP50Ms: number;
  pollP99Ms: number;
  duplicates: number;
  /** A kafkajs consumer group (eachBatch, offsets committed after each batch) on the same topic. */
  kafkajsMessagesPerSecond: number;
  kafkajsDuplicates: number;
}

export interface ClusterResults {
  brokers: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  acks: 'all';
  startSeconds: number;
  publish: PublishRow[];
  groupPoll: GroupPollRow;
}

async function startCluster(
  log: (line: string) => void,
): Promise<{ kafka: LocalKafka; cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-bench-kafka3-'));
  try {
    const kafka = await startLocalKafka({
      ...PRIVATE_CLUSTER,
      dataDir,
      log: (line) => log(`kafka3: ${line}`),
    });
    return {
      kafka,
      async cleanup() {
        await kafka.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** `count` records of 1 KiB, keyed, sent with acks=all in batches of 500. */
async function preload(bootstrap: string, topic: string, count: number): Promise<void> {
  const producer = new Kafka({ brokers: brokerList(bootstrap), logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  try {
    const value = 'x'.repeat(1024);
    for (let from = 0; from < count; from += 500) {
      const messages = Array.from({ length: Math.min(500, count - from) }, (_, i) => ({
        key: `m${from + i}`,
        value,
      }));
      await retryRetriable(() => producer.send({ topic, acks: -1, messages }));
    }
  } finally {
    await producer.disconnect();
  }
}

interface Consumed {
  topic: string;
  count: number;
  messages: Array<{ partition: number; offset: number }>;
  joining?: boolean;
}

/**
 * Polls one group until `total` distinct records were handed out. The first poll that
 * returns records (the group's join included) starts the clock and is not counted.
 */
async function gatewayPolls(stack: Stack, topic: string, total: number) {
  const seen = new Set<string>();
  let duplicates = 0;
  const times: number[] = [];
  let started = 0;
  let counted = 0;
  const deadline = Date.now() + 10 * 60_000;
  while (seen.size < total) {
    if (Date.now() > deadline)
      throw new Error(`group poll: ${seen.size} of ${total} records after 10 minutes`);
    const at = performance.now();
    const answer = await callTool<Consumed>(stack.url, stack.key, 'event_consume', {
      topic,
      group: 'bench-poll',
      max: POLL_MAX,
      timeout_ms: 5000,
    });
    const ms = performance.now() - at;
    for (const m of answer.messages) {
      const id = `${m.partition}:${m.offset}`;
      if (seen.has(id)) duplicates++;
      seen.add(id);
    }
    if (started === 0) {
      if (answer.count > 0) started = performance.now();
      continue;
    }
    times.push(ms);
    counted += answer.count;
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    pollsPerSecond: Math.round(times.length / seconds),
    messagesPerSecond: Math.round(counted / seconds),
    pollP50Ms: Math.round(percentile(times, 50) * 10) / 10,
    pollP99Ms: Math.round(percentile(times, 99) * 10) / 10,
    duplicates,
  };
}

/** The same drain by a kafkajs consumer group; its clock also starts after the first batch. */
async function kafkajsPolls(bootstrap: string, topic: string, total: number) {
  const kafka = new Kafka({ brokers: brokerList(bootstrap), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: 'bench-poll-kafkajs' });
  await consumer.connect();
  const seen = new Set<string>();
  let duplicates = 0;
  let started = 0;
  let counted = 0;
  let ended = 0;
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('kafkajs group poll: not drained in 10 minutes')),
        600_000,
      );
      void consumer.run({
        // Offsets resolved per batch are committed after each batch (kafkajs's defaults).
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) {
            const id = `${batch.partition}:${m.offset}`;
            if (seen.has(id)) duplicates++;
            seen.add(id);
          }
          if (started === 0) started = performance.now();
          else counted += batch.messages.length;
          if (seen.size >= total && ended === 0) {
            ended = performance.now();
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return { messagesPerSecond: Math.round(counted / ((ended - started) / 1000)), duplicates };
}

async function benchGroupPoll(
  bootstrap: string,
  stack: Stack,
  total: number,
  log: (line: string) => void,
): Promise<GroupPollRow> {
  const topic = `bench-poll-${Date.now().toString(36)}`;
  await createTopic(bootstrap, topic, PARTITIONS, CLUSTER_REPLICATION);
  log(`cluster: preloading ${total} records (acks=all)`);
  await preload(bootstrap, topic, total);
  log('cluster: event_consume through one group until the topic is drained');
  const ours = await gatewayPolls(stack, topic, total);
  log('cluster: kafkajs consumer group on the same topic');
  const theirs = await kafkajsPolls(bootstrap, topic, total);
  log(
    `cluster group poll: ${ours.messagesPerSecond} msgs/s (${ours.pollsPerSecond} polls/s, p50 ${ours.pollP50Ms} ms), kafkajs ${theirs.messagesPerSecond} msgs/s`,
  );
  return {
    messages: total,
    ...ours,
    kafkajsMessagesPerSecond: theirs.messagesPerSecond,
    kafkajsDuplicates: theirs.duplicates,
  };
}

/** Publish and group-poll rows on a three-broker cluster started (and stopped) here. */
export async function benchEventCluster(
  plan: { publishSeconds: number; pollMessages: number },
  log: (line: string) => void,
): Promise<ClusterResults> {
  const started = Date.now();
  log('cluster: starting three brokers (RF 3, min.insync.replicas=2)');
  const { kafka, cleanup } = await startCluster(log);
  const startSeconds = Math.round((Date.now() - started) / 1000);
  try {
    const bootstrap = kafka.plaintext;
    const stack = await startStack(bootstrap);
    try {
      const publish = await benchPublish(
        bootstrap,
        stack,
        [1, 64],
        plan.publishSeconds,
        log,
        CLUSTER_REPLICATION,
      );
      const groupPoll = await benchGroupPoll(bootstrap, stack, plan.pollMessages, log);
      return {
        brokers: kafka.brokers.length,
        replicationFactor: CLUSTER_REPLICATION.replicationFactor,
        minInsyncReplicas: CLUSTER_REPLICATION.minInsyncReplicas!,
        acks: 'all',
        startSeconds,
        publish,
        groupPoll,
      };
    } finally {
      await stack.stop();
    }
  } finally {
    await cleanup();
  }
}
