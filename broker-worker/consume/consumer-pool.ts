/**
 * The live group consumers, one per (group, topic), kept warm between polls so a poll does
 * not pay a group join each time. Bounded: past `maxConsumers` the least recently used
 * idle consumer leaves its group; consumers unused for `idleMs` leave on their own.
 */
import type { KafkaConfig } from 'kafkajs';
import { MethodError } from '../errors.ts';
import type { BrokerHealth } from '../health.ts';
import type { Logger } from '../logger.ts';
import { GroupConsumer } from './group-consumer.ts';

export interface ConsumerPoolOptions {
  kafkaConfig: KafkaConfig;
  sessionTimeoutMs: number;
  idleMs: number;
  maxConsumers: number;
  logger: Logger;
  health: BrokerHealth;
  lingerMs: number;
  ackTimeoutMs: number;
  uncommittedMax: number;
}

export class ConsumerPool {
  private readonly consumers = new Map<string, GroupConsumer>();
  /** Consumers leaving their group: they may still hold leases that get settled meanwhile. */
  private readonly leaving = new Set<GroupConsumer>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: ConsumerPoolOptions) {
    const every = Math.max(250, Math.min(10_000, Math.floor(options.idleMs / 4)));
    this.sweeper = setInterval(() => this.sweepIdle(), every);
    this.sweeper.unref();
  }

  get size(): number {
    return this.consumers.size;
  }

  /** Messages fetched and waiting for a poll, over every live consumer. */
  get buffered(): number {
    let count = 0;
    for (const consumer of this.consumers.values()) count += consumer.buffered;
    return count;
  }

  /** Messages handed out and not committed yet, over every consumer (leaving ones too). */
  get uncommitted(): number {
    let count = 0;
    for (const consumer of this.consumers.values()) count += consumer.uncommitted;
    for (const consumer of this.leaving) count += consumer.uncommitted;
    return count;
  }

  /** Messages under open leases, over every consumer (leaving ones too). */
  get leased(): number {
    let count = 0;
    for (const consumer of [...this.consumers.values(), ...this.leaving]) count += consumer.leased;
    return count;
  }

  /** The warm consumer for (group, topic), created (and started) on first use. */
  acquire(group: string, topic: string): GroupConsumer {
    if (this.closed)
      throw new MethodError('OVERLOADED', 'The broker worker is shutting down; retry in a moment.', true);
    const key = `${group}\u0000${topic}`;
    const existing = this.consumers.get(key);
    if (existing && !existing.failed && existing.liveState !== 'closing' && existing.liveState !== 'closed') {
      existing.lastUsedAt = Date.now();
      return existing;
    }
    if (existing) this.retire(key, existing);
    if (this.consumers.size >= this.options.maxConsumers) this.evictLeastRecentlyUsed();

    const consumer = new GroupConsumer({
      kafkaConfig: this.options.kafkaConfig,
      group,
      topic,
      sessionTimeoutMs: this.options.sessionTimeoutMs,
      logger: this.options.logger,
      health: this.options.health,
      lingerMs: this.options.lingerMs,
      ackTimeoutMs: this.options.ackTimeoutMs,
      uncommittedMax: this.options.uncommittedMax,
    });
    this.consumers.set(key, consumer);
    consumer.start();
    this.options.logger.info({ group, topic, live: this.consumers.size }, 'group consumer started');
    return consumer;
  }

  private evictLeastRecentlyUsed(): void {
    let victim: [string, GroupConsumer] | null = null;
    for (const entry of this.consumers) {
      if (entry[1].busy) continue;
      if (!victim || entry[1].lastUsedAt < victim[1].lastUsedAt) victim = entry;
    }
    if (!victim) {
      throw new MethodError(
        'OVERLOADED',
        `All ${this.options.maxConsumers} group consumers of this broker worker are busy with polls ` +
          '(BROKER_MAX_CONSUMERS); retry shortly.',
        true,
      );
    }
    this.options.logger.info(
      { group: victim[1].group, topic: victim[1].topic },
      'evicting least recently used consumer',
    );
    this.retire(victim[0], victim[1]);
  }

  private sweepIdle(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const [key, consumer] of this.consumers) {
      if (!consumer.busy && (consumer.lastUsedAt < cutoff || consumer.failed)) {
        this.options.logger.info(
          { group: consumer.group, topic: consumer.topic },
          'idle consumer leaves its group',
        );
        this.retire(key, consumer);
      }
    }
  }

  private retire(key: string, consumer: GroupConsumer): void {
    if (this.consumers.get(key) === consumer) this.consumers.delete(key);
    this.leaving.add(consumer);
    void consumer.close().finally(() => this.leaving.delete(consumer));
  }

  /**
   * Settles poll leases (see GroupConsumer): `commit` for answers written to their caller,
   * `rewind` for answers that were not. Unknown ids were already rewound (timeout, link
   * loss, worker restart): their messages are delivered again.
   */
  async settle(
    commit: readonly string[],
    rewind: readonly string[],
  ): Promise<{ settled: number; unknown: number }> {
    const holders = [...this.consumers.values(), ...this.leaving];
    const holderOf = (id: string) => holders.find((c) => c.holds(id));
    let settled = 0;
    for (const id of rewind) if (holderOf(id)?.rewind(id)) settled += 1;
    const commits: Array<Promise<boolean>> = [];
    for (const id of commit) {
      const holder = holderOf(id);
      if (holder) commits.push(holder.commitLease(id));
    }
    for (const done of await Promise.all(commits)) if (done) settled += 1;
    return { settled, unknown: commit.length + rewind.length - settled };
  }

  /**
   * Discards the consumers of a topic that was just deleted, busy or not: nothing they hold
   * may be committed, since a topic created again under the name starts over at offset 0
   * (see GroupConsumer.discard). The next poll starts a fresh consumer.
   */
  retireTopic(topic: string): void {
    for (const [key, consumer] of this.consumers) {
      if (consumer.topic !== topic) continue;
      this.consumers.delete(key);
      this.leaving.add(consumer);
      void consumer.discard().finally(() => this.leaving.delete(consumer));
    }
  }

  /** Every consumer leaves its group (running polls answer first). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.consumers.values()];
    this.consumers.clear();
    for (const consumer of all) this.leaving.add(consumer);
    await Promise.all(all.map((c) => c.close().finally(() => this.leaving.delete(c))));
  }
}
