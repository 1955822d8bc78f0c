/**
 * The at-least-once ledger of one GroupConsumer: which fetched messages are out under a
 * lease, and how far each partition's committed offset may move.
 *
 * A poll hands its messages out under a lease and commits nothing. The gateway settles the
 * lease once it knows whether the answer reached the caller's HTTP connection: commit lets
 * the committed offset pass those messages; rewind puts them back for the next poll. A
 * lease not settled within `ackTimeoutMs`, or whose IPC link closes, is rewound. The
 * committed offset of a partition never passes a message that is still buffered or under
 * an open lease, so a crash of the worker or the gateway at any instant leads to
 * redelivery (from the committed offset), never to loss.
 *
 * Residual window (documented, not closed): kafkajs retries a commit that failed with a
 * retriable error (e.g. a coordinator move) using the consumer's generation at the time
 * of the retry; if a rebalance completed in between and moved the partition elsewhere,
 * that retry can advance the new owner's offset. Kafka's classic group protocol offers
 * no fencing for this from outside the client.
 */
import { randomBytes } from 'node:crypto';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';
import type { BrokerHealth } from '../health.ts';
import { describeKafkaError } from '../kafka/errors.ts';
import type { Logger } from '../logger.ts';
import { Mutex } from '../util/sync.ts';
import type { MessageBuffer, TakenMessage } from './message-buffer.ts';

/** Pause between commit attempts (times the attempt number) while the group rebalances. */
const COMMIT_RETRY_PAUSE_MS = 200;
/** Background retries of a failed commit; the next acknowledgement starts a new round. */
const MAX_COMMIT_RETRIES = 10;

export interface LeaseBookOptions {
  group: string;
  buffer: MessageBuffer;
  /** An unsettled lease is rewound after this long (BROKER_CONSUME_ACK_TIMEOUT_MS). */
  ackTimeoutMs: number;
  log: Logger;
  health: BrokerHealth;
  /** Commits these offsets (partition to next offset) for the consumer's topic. */
  commit(offsets: Map<number, number>): Promise<void>;
  /** Whether the consumer has left its group: nothing may be committed any more. */
  closed(): boolean;
  /** A lease took messages out of the buffer: a held fetch loop may go on. */
  onLeased(): void;
  /** A lease's messages went back to the buffer: a waiting poll may take them. */
  onRewound(): void;
  /** A commit passed acknowledged messages: a poll waiting for room may go on. */
  onCommitted(): void;
}

interface Lease {
  taken: TakenMessage[];
  timer: NodeJS.Timeout;
  owner: AbortSignal | undefined;
  onOwnerGone: () => void;
}

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  /** Lease ids are unique across consumers and worker restarts, so a stale settle matches nothing. */
  private readonly prefix = `${randomBytes(6).toString('hex')}.`;
  private counter = 0;
  /** Last offset committed per partition, with the incarnation it was committed under. */
  private readonly committed = new Map<number, { incarnation: number; offset: number }>();
  private readonly commitLock = new Mutex();
  private queuedFlush: Promise<void> | null = null;
  private commitFailures = 0;
  /**
   * Acknowledged offsets per partition not yet passed by a commit, with the incarnation they
   * were fetched under: only counted (uncommitted), never used to decide a commit.
   */
  private readonly acked = new Map<number, { incarnation: number; offsets: number[] }>();

  constructor(private readonly options: LeaseBookOptions) {}

  /**
   * Messages handed out whose offsets are not committed yet: those under open leases, and
   * acknowledged ones a commit has not passed. A crash now would deliver them all again.
   */
  get uncommitted(): number {
    let count = this.leased;
    for (const [partition, entry] of this.acked) {
      if (this.options.buffer.incarnationOf(partition) === entry.incarnation) count += entry.offsets.length;
    }
    return count;
  }

  /** Messages handed out under leases the gateway has not settled yet. */
  get leased(): number {
    let count = 0;
    for (const lease of this.leases.values()) count += lease.taken.length;
    return count;
  }

  private noteAcknowledged(taken: TakenMessage[]): void {
    for (const m of taken) {
      const incarnation = m.slot.incarnation;
      let entry = this.acked.get(m.partition);
      if (!entry || entry.incarnation !== incarnation) {
        entry = { incarnation, offsets: [] };
        this.acked.set(m.partition, entry);
      }
      entry.offsets.push(m.offset);
    }
  }

  private noteCommitted(partition: number, incarnation: number, offset: number): void {
    const entry = this.acked.get(partition);
    if (!entry) return;
    if (entry.incarnation !== incarnation) this.acked.delete(partition);
    else entry.offsets = entry.offsets.filter((o) => o >= offset);
  }

  /** Outstanding leases (handed out, neither committed nor rewound yet). */
  get size(): number {
    return this.leases.size;
  }

  /** Whether this book holds the lease. */
  holds(id: string): boolean {
    return this.leases.has(id);
  }

  /** Hands `taken` out under a new lease, bound to `owner` (the IPC link that will settle it). */
  lease(
    taken: TakenMessage[],
    owner: AbortSignal | undefined,
  ): { messages: ConsumedMessage[]; leaseId: string } {
    const id = `${this.prefix}${++this.counter}`;
    const onOwnerGone = () => this.rewind(id, 'the gateway link closed');
    const timer = setTimeout(() => this.rewind(id, 'no acknowledgement in time'), this.options.ackTimeoutMs);
    timer.unref();
    this.leases.set(id, { taken, timer, owner, onOwnerGone });
    this.options.onLeased();
    if (owner?.aborted) queueMicrotask(onOwnerGone);
    else owner?.addEventListener('abort', onOwnerGone, { once: true });
    return { messages: taken.map((t) => t.message), leaseId: id };
  }

  private release(id: string): Lease | null {
    const lease = this.leases.get(id);
    if (!lease) return null;
    this.leases.delete(id);
    clearTimeout(lease.timer);
    lease.owner?.removeEventListener('abort', lease.onOwnerGone);
    return lease;
  }

  /** Forgets every lease without committing or rewinding it (the consumer left its group). */
  releaseAll(): void {
    for (const id of [...this.leases.keys()]) this.release(id);
  }

  /**
   * The answer was written to the caller: its messages no longer hold back the committed
   * offset. Resolves once the resulting commit was attempted (a failure is retried in the
   * background; until it succeeds the messages would merely be delivered again).
   */
  async commitLease(id: string): Promise<boolean> {
    const lease = this.release(id);
    if (!lease) return false;
    this.noteAcknowledged(lease.taken);
    await this.flush();
    return true;
  }

  /** The answer never reached the caller: its messages go back for the next poll. */
  rewind(id: string, why = 'the answer could not be written to the caller'): boolean {
    const lease = this.release(id);
    if (!lease) return false;
    const restored = this.options.buffer.putBack(lease.taken);
    this.options.log.debug({ lease: id, count: lease.taken.length, restored, why }, 'lease rewound');
    this.options.onRewound();
    return true;
  }

  /** Commits what acknowledgements allow; concurrent requests share one queued round. */
  flush(): Promise<void> {
    if (this.queuedFlush) return this.queuedFlush;
    const round = this.commitLock.run(async () => {
      this.queuedFlush = null;
      await this.commitOnce();
    });
    this.queuedFlush = round;
    return round;
  }

  /**
   * Per assigned partition, the offset to commit: the lowest offset not yet acknowledged,
   * whether still buffered or handed out under an open lease, or one past the last fetched
   * message when everything fetched was acknowledged. Leases of an ended incarnation (the
   * partition moved away meanwhile) hold nothing back and are never committed.
   */
  private commitTargets(): Map<number, number> {
    const { buffer } = this.options;
    const targets = new Map<number, number>();
    for (const partition of buffer.assignedPartitions()) {
      const fetched = buffer.fetchedUpTo(partition);
      if (fetched === undefined) continue;
      const incarnation = buffer.incarnationOf(partition);
      let low = Math.min(fetched, buffer.lowestBuffered(partition) ?? fetched);
      for (const lease of this.leases.values()) {
        for (const m of lease.taken) {
          if (m.partition === partition && m.slot.incarnation === incarnation && m.offset < low)
            low = m.offset;
        }
      }
      const done = this.committed.get(partition);
      if (done && done.incarnation === incarnation && done.offset >= low) continue;
      targets.set(partition, low);
    }
    return targets;
  }

  private async commitOnce(): Promise<void> {
    if (this.options.closed()) return;
    const targets = this.commitTargets();
    if (targets.size === 0) return;
    const { buffer } = this.options;
    const incarnations = new Map([...targets.keys()].map((p) => [p, buffer.incarnationOf(p)]));
    try {
      await this.options.commit(targets);
      for (const [partition, offset] of targets) {
        const incarnation = incarnations.get(partition);
        if (incarnation === undefined) continue;
        this.committed.set(partition, { incarnation, offset });
        this.noteCommitted(partition, incarnation, offset);
      }
      this.commitFailures = 0;
      this.options.health.recordSuccess();
      this.options.onCommitted();
    } catch (error) {
      const described = describeKafkaError(error, `commit offsets of consumer group "${this.options.group}"`);
      this.commitFailures += 1;
      this.options.log.warn(
        { err: described.message, attempt: this.commitFailures },
        'commit failed; acknowledged messages stay uncommitted and the commit is retried',
      );
      if (this.commitFailures <= MAX_COMMIT_RETRIES && !this.options.closed()) {
        const retry = setTimeout(() => void this.flush(), COMMIT_RETRY_PAUSE_MS * this.commitFailures);
        retry.unref();
      }
    }
  }
}
