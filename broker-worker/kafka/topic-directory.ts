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
/**
 * Past this age a check still answers from the cache but starts a refresh in the
 * background, so a topic in steady use never makes a call wait for a metadata round trip
 * (one listing every topic of the cluster). The staleness bound stays FRESH_MS.
 */
const REFRESH_AHEAD_MS = 5_000;

export function isInternalTopic(name: string): boolean {
  return name.startsWith('__') || name.startsWith('_confluent');
}

export class TopicDirectory {
  private partitions = new Map<string, PartitionMetadata[]>();
  /** When the metadata now cached was asked for (0: nothing cached, or invalidated). */
  private fetchedAt = 0;
  /** Bumped by invalidate(): a refresh that began before it must not count as fresh. */
  private generation = 0;
  private inFlight: { generation: number; done: Promise<void> } | null = null;

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
    const age = Date.now() - this.fetchedAt;
    if (known && age < FRESH_MS) {
      // A failed refresh-ahead is not this call's problem; once the cache is stale a call
      // waits for a refresh of its own and reports its error.
      if (age >= REFRESH_AHEAD_MS) this.refresh().catch(() => undefined);
      return known;
    }
    await this.refresh();
    const fresh = this.partitions.get(topic);
    if (!fresh) throw unknownTopicError(topic);
    return fresh;
  }

  /** Drops cached knowledge so the next check asks the broker (not a request already under way). */
  invalidate(): void {
    this.fetchedAt = 0;
    this.generation += 1;
  }

  /** Concurrent callers share one metadata request, unless it began before an invalidate(). */
  private refresh(): Promise<void> {
    if (this.inFlight && this.inFlight.generation === this.generation) return this.inFlight.done;
    const generation = this.generation;
    const askedAt = Date.now();
    const done = this.admin
      .get()
      .then((admin) => admin.fetchTopicMetadata())
      .then(({ topics }) => {
        if (generation !== this.generation) return;
        this.partitions = new Map(topics.map((t) => [t.name, t.partitions]));
        this.fetchedAt = askedAt;
      })
      .finally(() => {
        if (this.inFlight?.done === done) this.inFlight = null;
      });
    this.inFlight = { generation, done };
    return done;
  }
}
