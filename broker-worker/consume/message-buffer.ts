/**
 * Messages a group consumer has fetched but not yet handed out, per partition.
 *
 * - Order within a partition is kept; across partitions, messages leave in arrival order.
 * - Every assignment of a partition to this consumer is an "incarnation". Messages carry
 *   the incarnation they were fetched under, so a poll whose commit failed can only put
 *   messages back into the same incarnation, never into a later one that refetched them.
 * - `nextOffset` per partition drops re-fetched duplicates: after a rebalance that keeps a
 *   partition here, kafkajs fetches again from the committed offset, while the messages
 *   after it are still buffered (or being handed out).
 */
import type { BufferedMessage } from './message.ts';

interface Entry {
  item: BufferedMessage;
  seq: number;
  incarnation: number;
}

export interface TakenMessage extends BufferedMessage {
  /** @internal where the message came from, so putBack can restore it exactly */
  readonly slot: { seq: number; incarnation: number };
}

export class MessageBuffer {
  private readonly queues = new Map<number, Entry[]>();
  private readonly nextOffset = new Map<number, number>();
  private readonly incarnations = new Map<number, number>();
  private seq = 0;
  private incarnationCounter = 0;
  count = 0;
  bytes = 0;

  /** Partitions currently assigned here. */
  assignedPartitions(): number[] {
    return [...this.incarnations.keys()];
  }

  isAssigned(partition: number): boolean {
    return this.incarnations.has(partition);
  }

  /** The current incarnation of an assigned partition. */
  incarnationOf(partition: number): number | undefined {
    return this.incarnations.get(partition);
  }

  /** Lowest offset still buffered (not handed out) for a partition. */
  lowestBuffered(partition: number): number | undefined {
    return this.queues.get(partition)?.[0]?.item.offset;
  }

  /** One past the highest offset fetched for a partition in its current incarnation. */
  fetchedUpTo(partition: number): number | undefined {
    return this.nextOffset.get(partition);
  }

  /**
   * Records a new assignment: partitions that stay keep their messages; partitions that
   * left are dropped (their messages will be fetched again by whoever owns them now).
   */
  assign(partitions: Iterable<number>): void {
    const next = new Set(partitions);
    for (const partition of [...this.incarnations.keys()]) {
      if (!next.has(partition)) this.forget(partition);
    }
    for (const partition of next) {
      if (!this.incarnations.has(partition)) this.incarnations.set(partition, ++this.incarnationCounter);
    }
  }

  /** Drops everything, as after the consumer restarted. */
  reset(): void {
    for (const partition of [...this.incarnations.keys()]) this.forget(partition);
  }

  /** Adds fetched messages (in offset order) of an assigned partition; returns how many were new. */
  append(partition: number, items: BufferedMessage[]): number {
    const incarnation = this.incarnations.get(partition);
    if (incarnation === undefined) return 0;
    let queue = this.queues.get(partition);
    if (!queue) {
      queue = [];
      this.queues.set(partition, queue);
    }
    let next = this.nextOffset.get(partition) ?? Number.NEGATIVE_INFINITY;
    let added = 0;
    for (const item of items) {
      if (item.offset < next) continue;
      queue.push({ item, seq: ++this.seq, incarnation });
      next = item.offset + 1;
      this.count += 1;
      this.bytes += item.bytes;
      added += 1;
    }
    this.nextOffset.set(partition, next);
    return added;
  }

  /**
   * Removes up to `max` messages in arrival order, stopping before the byte budget is
   * exceeded (but always taking at least one message when any is there).
   */
  take(max: number, byteBudget = Number.POSITIVE_INFINITY): TakenMessage[] {
    const taken: TakenMessage[] = [];
    let bytes = 0;
    while (taken.length < max) {
      let best: Entry[] | undefined;
      for (const queue of this.queues.values()) {
        const head = queue[0];
        if (head && (!best || head.seq < best[0]!.seq)) best = queue;
      }
      if (!best) break;
      const head = best[0]!;
      if (taken.length > 0 && bytes + head.item.bytes > byteBudget) break;
      best.shift();
      this.count -= 1;
      this.bytes -= head.item.bytes;
      bytes += head.item.bytes;
      taken.push({ ...head.item, slot: { seq: head.seq, incarnation: head.incarnation } });
    }
    return taken;
  }

  /**
   * Returns messages that were taken but not handed out (their commit failed or the poll
   * was cancelled). Messages of an incarnation that has since ended are dropped: the new
   * owner, or this consumer's new incarnation, fetches them again from the committed offset.
   */
  putBack(taken: TakenMessage[]): number {
    let restored = 0;
    const byPartition = new Map<number, Entry[]>();
    for (const message of taken) {
      if (this.incarnations.get(message.partition) !== message.slot.incarnation) continue;
      const { slot, ...item } = message;
      const list = byPartition.get(message.partition) ?? [];
      list.push({ item, seq: slot.seq, incarnation: slot.incarnation });
      byPartition.set(message.partition, list);
    }
    for (const [partition, entries] of byPartition) {
      const queue = this.queues.get(partition) ?? [];
      const merged = [...entries, ...queue].sort((a, b) => a.item.offset - b.item.offset);
      this.queues.set(partition, merged);
      for (const entry of entries) {
        this.count += 1;
        this.bytes += entry.item.bytes;
        restored += 1;
      }
    }
    return restored;
  }

  private forget(partition: number): void {
    const queue = this.queues.get(partition);
    if (queue) {
      for (const entry of queue) {
        this.count -= 1;
        this.bytes -= entry.item.bytes;
      }
    }
    this.queues.delete(partition);
    this.nextOffset.delete(partition);
    this.incarnations.delete(partition);
  }
}

/** The offsets to commit for handing out `messages`: per partition, one past the highest. */
export function commitOffsetsFor(messages: readonly BufferedMessage[]): Map<number, number> {
  const offsets = new Map<number, number>();
  for (const m of messages) offsets.set(m.partition, Math.max(offsets.get(m.partition) ?? 0, m.offset + 1));
  return offsets;
}

/** The offsets that undo a commit of `messages`: per partition, the lowest offset taken. */
export function rewindOffsetsFor(messages: readonly BufferedMessage[]): Map<number, number> {
  const offsets = new Map<number, number>();
  for (const m of messages)
    offsets.set(m.partition, Math.min(offsets.get(m.partition) ?? m.offset, m.offset));
  return offsets;
}
