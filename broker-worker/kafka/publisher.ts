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
 * arrive while a send is in flight wait and go out together as one batch per topic (never
 * mixing topics, so a bad topic fails only its own calls). A lone call is sent at once.
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
  private queue: Queued[] = [];
  private batchesInFlight = 0;
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
    return new Promise<PublishResult>((resolve, reject) => {
      this.queue.push({ record, partition, bytes, resolve, reject });
      if (this.batchesInFlight === 0) this.flush();
    });
  }

  /** Sends everything queued, as batches of one topic each. */
  private flush(): void {
    const queued = this.queue;
    this.queue = [];
    const byTopic = new Map<string, Queued[][]>();
    for (const item of queued) {
      const batches = byTopic.get(item.record.topic) ?? [[]];
      byTopic.set(item.record.topic, batches);
      let current = batches[batches.length - 1]!;
      const size = current.reduce((sum, q) => sum + q.bytes, 0);
      if (
        current.length > 0 &&
        (current.length >= BATCH_MAX_RECORDS || size + item.bytes > BATCH_MAX_BYTES)
      ) {
        current = [];
        batches.push(current);
      }
      current.push(item);
    }
    for (const batches of byTopic.values()) {
      for (const batch of batches) {
        this.batchesInFlight += 1;
        void this.sendBatch(batch).finally(() => {
          this.batchesInFlight -= 1;
          if (this.batchesInFlight === 0 && this.queue.length > 0) this.flush();
        });
      }
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
