/**
 * What topics exist, from cluster metadata, cached briefly. Publishing and group reads
 * check here first because kafkajs retries an unknown topic for a long time (forever for
 * the idempotent producer) before it gives up; a missing topic must fail at once, with
 * a message saying how to create it.
 */
import type { Admin, PartitionMetadata } from 'kafkajs';
import type { TopicsResult } from '../../shared/event/schemas.ts';
import { unknownTopicError } from './errors.ts';
import type { LazyConnection } from './lazy.ts';

/** A topic seen this recently is trusted to exist without asking the broker again. */
const FRESH_MS = 10_000;

export function isInternalTopic(name: string): boolean {
  return name.startsWith('__') || name.startsWith('_confluent');
}

export class TopicDirectory {
  private partitions = new Map<string, PartitionMetadata[]>();
  private fetchedAt = 0;
  private inFlight: Promise<void> | null = null;

  constructor(private readonly admin: LazyConnection<Admin>) {}

  /** All topics with partition counts, fresh from the broker. */
  async list(): Promise<TopicsResult['topics']> {
    await this.refresh();
    return [...this.partitions]
      .map(([name, partitions]) => ({ name, partitions: partitions.length, internal: isInternalTopic(name) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The topic's partitions when it exists; throws UNKNOWN_TOPIC otherwise. */
  async requireExists(topic: string): Promise<PartitionMetadata[]> {
    const known = this.partitions.get(topic);
    if (known && Date.now() - this.fetchedAt < FRESH_MS) return known;
    await this.refresh();
    const fresh = this.partitions.get(topic);
    if (!fresh) throw unknownTopicError(topic);
    return fresh;
  }

  /** Drops cached knowledge so the next check asks the broker. */
  invalidate(): void {
    this.fetchedAt = 0;
  }

  /** Concurrent callers share one metadata request. */
  private refresh(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = (async () => {
        try {
          const admin = await this.admin.get();
          const { topics } = await admin.fetchTopicMetadata();
          this.partitions = new Map(topics.map((t) => [t.name, t.partitions]));
          this.fetchedAt = Date.now();
        } finally {
          this.inFlight = null;
        }
      })();
    }
    return this.inFlight;
  }
}
