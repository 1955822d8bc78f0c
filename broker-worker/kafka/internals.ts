/**
 * The only place that reaches into kafkajs internals (kafkajs 2.2.4, pinned by
 * package-lock). kafkajs's public consumer always joins a group and has no assign(), so a
 * read that must not touch any group (from=earliest|latest) talks to brokers through the
 * client's own Cluster and Broker objects: metadata, ListOffsets and Fetch requests,
 * decoded and filtered (control records, aborted transactions) by kafkajs's Batch class.
 *
 * Everything is checked for shape when first used, so a kafkajs upgrade that moves these
 * internals fails with a clear message instead of undefined behaviour.
 */
import { createRequire } from 'node:module';
import type { Kafka, KafkaMessage } from 'kafkajs';

const require = createRequire(import.meta.url);

export interface RawPartitionData {
  partition: number;
  errorCode: number;
  highWatermark: string;
  messages: KafkaMessage[];
}

export interface RawFetchResponse {
  responses: Array<{ topicName: string; partitions: RawPartitionData[] }>;
}

export interface RawBroker {
  fetch(request: {
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{
      topic: string;
      partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }>;
    }>;
  }): Promise<RawFetchResponse>;
}

export interface RawCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  isConnected(): boolean;
  refreshMetadata(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number; leader: number }>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(node: { nodeId: number | string }): Promise<RawBroker>;
  fetchTopicsOffset(
    topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>,
  ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}

export interface RawBatch {
  /** Messages to hand out: at or after the fetch offset, no control records, no aborted ones. */
  messages: KafkaMessage[];
  /** Everything at or after the fetch offset, control records included. */
  messagesWithinOffset: KafkaMessage[];
}

type BatchConstructor = new (
  topic: string,
  fetchedOffset: string,
  partitionData: RawPartitionData,
) => RawBatch;

/** Fetch isolation level: only committed transactional data, as kafkajs consumers read by default. */
export const READ_COMMITTED = 1;

function internalsChanged(what: string): Error {
  return new Error(
    `kafkajs internals changed (${what}); earliest/latest reads need kafkajs 2.2.x. ` +
      'Reinstall with the committed package-lock.json.',
  );
}

/** A new Cluster (own broker connections) built from the client's configuration. */
export function createRawCluster(kafka: Kafka): RawCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  if (!symbol) throw internalsChanged('Kafka has no createCluster');
  const create = (kafka as unknown as Record<symbol, unknown>)[symbol];
  if (typeof create !== 'function') throw internalsChanged('createCluster is not a function');
  const cluster = create({
    allowAutoTopicCreation: false,
    isolationLevel: READ_COMMITTED,
    metadataMaxAge: 300_000,
  }) as RawCluster;
  for (const method of ['connect', 'findBroker', 'fetchTopicsOffset', 'findLeaderForPartitions'] as const) {
    if (typeof cluster[method] !== 'function') throw internalsChanged(`Cluster.${method} is missing`);
  }
  return cluster;
}

let batchClass: BatchConstructor | null = null;

export function decodeBatch(topic: string, fetchedOffset: string, partitionData: RawPartitionData): RawBatch {
  if (!batchClass) {
    const loaded = require('kafkajs/src/consumer/batch.js') as unknown;
    if (typeof loaded !== 'function') throw internalsChanged('consumer/batch.js');
    batchClass = loaded as BatchConstructor;
  }
  return new batchClass(topic, fetchedOffset, partitionData);
}

/**
 * Whether the broker's metadata flags `topic` as internal (Metadata `is_internal`), which
 * kafkajs's admin API does not pass on. Costs one connection and one Metadata round trip:
 * used only before deleting a topic.
 */
export async function brokerMarksInternal(kafka: Kafka, topic: string): Promise<boolean> {
  const cluster = createRawCluster(kafka);
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([topic]);
    const pool = (
      cluster as unknown as {
        brokerPool?: { metadata?: { topicMetadata?: Array<{ topic: string; isInternal?: boolean }> } };
      }
    ).brokerPool;
    const entries = pool?.metadata?.topicMetadata;
    if (!entries) throw internalsChanged('Cluster.brokerPool.metadata is missing');
    return entries.find((entry) => entry.topic === topic)?.isInternal === true;
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
