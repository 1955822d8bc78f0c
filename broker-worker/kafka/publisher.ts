/**
 * Publishing through one pooled idempotent producer (acks=all). Keyed records go to
 * murmur2(key) mod partitions, the Java client's rule, via kafkajs's DefaultPartitioner
 * (the Java-compatible one since kafkajs 2.0; tests check it against Kafka's own jar).
 */
import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import type { PublishResult } from '../../shared/event/schemas.ts';
import { isUnknownTopic } from './errors.ts';
import { LazyConnection } from './lazy.ts';

export interface OutgoingRecord {
  topic: string;
  value: string;
  key?: string | undefined;
  headers?: Record<string, string> | undefined;
}

export class Publisher {
  private readonly producer: LazyConnection<Producer>;
  /** Sends in flight per producer, so a retired producer is disconnected only when idle. */
  private readonly inFlight = new Map<Producer, Set<Promise<unknown>>>();

  constructor(kafka: Kafka) {
    this.producer = new LazyConnection(() =>
      kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        // Bounded, unlike kafkajs's idempotent default (retry forever): a call has a
        // deadline, and a producer whose send failed is replaced (see send()).
        retry: { initialRetryTime: 200, maxRetryTime: 3000, retries: 6 },
      }),
    );
  }

  /**
   * Sends one record and resolves with where it was written once all in-sync replicas
   * have it. `topicStillExists` is asked when the producer reports an unknown topic.
   */
  async publish(record: OutgoingRecord, topicStillExists: () => Promise<boolean>): Promise<PublishResult> {
    try {
      return await this.send(record);
    } catch (error) {
      // kafkajs fails every metadata refresh once any topic it has produced to is deleted,
      // which a fresh producer does not; retry once when the target topic is really there.
      if (isUnknownTopic(error) && (await topicStillExists())) return await this.send(record);
      throw error;
    }
  }

  private async send(record: OutgoingRecord): Promise<PublishResult> {
    const producer = await this.producer.get();
    const timestamp = Date.now();
    const sending = producer.send({
      topic: record.topic,
      acks: -1,
      messages: [
        {
          key: record.key ?? null,
          value: record.value,
          headers: record.headers ?? {},
          timestamp: String(timestamp),
        },
      ],
    });
    const pending = this.inFlight.get(producer) ?? new Set<Promise<unknown>>();
    this.inFlight.set(producer, pending);
    pending.add(sending);
    try {
      const [written] = await sending;
      if (!written) throw new Error('the broker acknowledged the write without a partition or offset');
      const appendTime = Number(written.logAppendTime ?? '-1');
      return {
        topic: written.topicName,
        partition: written.partition,
        offset: Number(written.baseOffset ?? written.offset),
        timestamp: new Date(appendTime > 0 ? appendTime : timestamp).toISOString(),
      };
    } catch (error) {
      // A send that failed after retries may leave the producer's sequence numbers out of
      // step with the broker; a new producer (new producer id) starts clean.
      this.retire();
      throw error;
    } finally {
      pending.delete(sending);
      if (pending.size === 0) this.inFlight.delete(producer);
    }
  }

  /** New sends get a new producer; the current one disconnects after its sends settle. */
  private retire(): void {
    const settled = Promise.allSettled([...this.inFlight.values()].flatMap((set) => [...set]));
    this.producer.drop(settled);
  }

  /** Called after a topic is deleted (see publish()). */
  reset(): void {
    this.retire();
  }

  /** Waits for in-flight sends (kafkajs resolves a send only when acknowledged), then disconnects. */
  async close(): Promise<void> {
    await this.producer.close();
  }
}
