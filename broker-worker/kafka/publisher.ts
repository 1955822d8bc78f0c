/**
 * Publishing through one pooled idempotent producer (acks=all).
 *
 * Partitioning: keyed records go to murmur2(key) mod partitions, the Java client's rule,
 * via kafkajs's DefaultPartitioner (the Java-compatible one since kafkajs 2.0; a test
 * checks it against Kafka's own jar). The partition is chosen here, before sending, so the
 * offset of every record in a coalesced batch is known from its partition's base offset.
 *
 * Coalescing: kafkajs's idempotent producer sends one request per broker at a time, so
 * one request per call would cap throughput at one round trip per broker. Calls that
 * arrive while a send to their topic is in flight wait and go out together as one batch
 * of that topic. Each topic waits only on its own sends: a topic whose send is being
 * retried (its leader gone, the topic deleted behind our back) holds no other topic's
 * calls, which would otherwise run out their deadlines behind it and still be written
 * later. A lone call is sent at once.
 */
import { type Kafka, Partitioners, type PartitionMetadata, type Producer } from 'kafkajs';
import type { PublishResult } from '../../shared/event/schemas.ts';
import { isUnknownTopic } from './errors.ts';
import { LazyConnection } from './lazy.ts';

/** Kept well under brokers' default 1 MB record-batch limit (message.max.bytes). */
const BATCH_MAX_BYTES = 512 * 1024;
const BATCH_MAX_RECORDS = 500;

export interface OutgoingRecord {
  topic: string;
  value: string;
  key?: string | undefined;
  headers?: Record<string, string> | undefined;
}

interface Queued {
  record: OutgoingRecord;
  partition: number;
  bytes: number;
  resolve(result: PublishResult): void;
  reject(error: unknown): void;
}

export class Publisher {
  private readonly producer: LazyConnection<Producer>;
  private readonly choosePartition = Partitioners.DefaultPartitioner();
  /** Calls waiting per topic while a send to that topic is in flight. */
  private readonly queues = new Map<string, Queued[]>();
  /** Batches in flight per topic (a topic is absent when none is). */
  private readonly inFlight = new Map<string, number>();
  /** Sends in flight per producer, so a retired producer is disconnected only when idle. */
  private readonly sending = new Map<Producer, Set<Promise<unknown>>>();

  constructor(kafka: Kafka) {
    this.producer = new LazyConnection(() =>
      kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        // Bounded, unlike kafkajs's idempotent default (retry forever): a call has a
        // deadline, and a producer whose send failed is replaced (see sendBatch()).
        retry: { initialRetryTime: 200, maxRetryTime: 3000, retries: 6 },
      }),
    );
  }

  /**
   * Sends one record and resolves with where it was written once all in-sync replicas have
   * it. `partitions` is the topic's current partition metadata; `topicStillExists` is asked
   * when the producer reports an unknown topic.
   */
  async publish(
    record: OutgoingRecord,
    partitions: PartitionMetadata[],
    topicStillExists: () => Promise<boolean>,
  ): Promise<PublishResult> {
    try {
      return await this.enqueue(record, partitions);
    } catch (error) {
      // kafkajs fails every metadata refresh once any topic it has produced to is deleted,
      // which a fresh producer does not; retry once when the target topic is really there.
      if (isUnknownTopic(error) && (await topicStillExists())) return await this.enqueue(record, partitions);
      throw error;
    }
  }

  private enqueue(record: OutgoingRecord, partitions: PartitionMetadata[]): Promise<PublishResult> {
    const partition = this.choosePartition({
      topic: record.topic,
      partitionMetadata: partitions,
      message: { key: record.key ?? null, value: record.value },
    });
    let bytes = Buffer.byteLength(record.value) + (record.key ? Buffer.byteLength(record.key) : 0) + 64;
    for (const [name, value] of Object.entries(record.headers ?? {})) bytes += name.length + value.length + 8;
    const { topic } = record;
    return new Promise<PublishResult>((resolve, reject) => {
      const queue = this.queues.get(topic) ?? [];
      queue.push({ record, partition, bytes, resolve, reject });
      this.queues.set(topic, queue);
      if (!this.inFlight.has(topic)) this.flush(topic);
    });
  }

  /** Sends everything queued for `topic`, in batches within the size bounds. */
  private flush(topic: string): void {
    const queued = this.queues.get(topic) ?? [];
    this.queues.delete(topic);
    const batches: Queued[][] = [];
    let current: Queued[] = [];
    let size = 0;
    for (const item of queued) {
      if (
        current.length > 0 &&
        (current.length >= BATCH_MAX_RECORDS || size + item.bytes > BATCH_MAX_BYTES)
      ) {
        batches.push(current);
        current = [];
        size = 0;
      }
      current.push(item);
      size += item.bytes;
    }
    if (current.length > 0) batches.push(current);
    for (const batch of batches) {
      this.inFlight.set(topic, (this.inFlight.get(topic) ?? 0) + 1);
      void this.sendBatch(batch).finally(() => {
        const left = (this.inFlight.get(topic) ?? 1) - 1;
        if (left > 0) {
          this.inFlight.set(topic, left);
          return;
        }
        this.inFlight.delete(topic);
        if (this.queues.has(topic)) this.flush(topic);
      });
    }
  }

  private async sendBatch(batch: Queued[]): Promise<void> {
    const topic = batch[0]!.record.topic;
    let producer: Producer;
    try {
      producer = await this.producer.get();
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    const timestamp = Date.now();
    const send = producer.sendBatch({
      acks: -1,
      topicMessages: [
        {
          topic,
          messages: batch.map(({ record, partition }) => ({
            key: record.key ?? null,
            value: record.value,
            headers: record.headers ?? {},
            partition,
            timestamp: String(timestamp),
          })),
        },
      ],
    });
    const pending = this.sending.get(producer) ?? new Set<Promise<unknown>>();
    this.sending.set(producer, pending);
    pending.add(send);
    try {
      const written = await send;
      const byPartition = new Map(written.map((w) => [w.partition, w]));
      const nextIndex = new Map<number, number>();
      for (const item of batch) {
        const meta = byPartition.get(item.partition);
        if (!meta) {
          item.reject(new Error(`the broker acknowledged the batch without partition ${item.partition}`));
          continue;
        }
        const index = nextIndex.get(item.partition) ?? 0;
        nextIndex.set(item.partition, index + 1);
        const appendTime = Number(meta.logAppendTime ?? '-1');
        item.resolve({
          topic,
          partition: item.partition,
          offset: Number(meta.baseOffset ?? meta.offset) + index,
          timestamp: new Date(appendTime > 0 ? appendTime : timestamp).toISOString(),
        });
      }
    } catch (error) {
      // A send that failed after retries may leave the producer's sequence numbers out of
      // step with the broker; a new producer (new producer id) starts clean.
      this.retire();
      for (const item of batch) item.reject(error);
    } finally {
      pending.delete(send);
      if (pending.size === 0) this.sending.delete(producer);
    }
  }

  /** New sends get a new producer; the current one disconnects after its sends settle. */
  private retire(): void {
    const settled = Promise.allSettled([...this.sending.values()].flatMap((set) => [...set]));
    this.producer.drop(settled);
  }

  /** Called after a topic is deleted (see publish()). */
  reset(): void {
    this.retire();
  }

  /** Waits for in-flight sends (kafkajs resolves a send only when acknowledged), then disconnects. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.sending.values()].flatMap((set) => [...set]));
    await this.producer.close();
  }
}
