/**
 * One warm kafkajs consumer for a (group, topic), shared by every poll of that pair.
 *
 * kafkajs has no poll(): a running consumer pushes batches to `eachBatch`. Here eachBatch
 * appends to a bounded MessageBuffer (holding the fetch loop while the buffer is full),
 * and a poll takes from the buffer. autoCommit is off, so kafkajs never commits on its own.
 *
 * At-least-once: a poll hands its messages out under a lease and commits nothing. The
 * gateway settles the lease once it knows whether the answer reached the caller's HTTP
 * connection: commit lets the committed offset pass those messages; rewind puts them back
 * for the next poll. A lease not settled within `ackTimeoutMs`, or whose IPC link closes,
 * is rewound. The committed offset of a partition never passes a message that is still
 * buffered or under an open lease, so a crash of the worker or the gateway at any instant
 * leads to redelivery (from the committed offset), never to loss. While a lease is open,
 * its messages are not handed to anyone else by this consumer.
 *
 * Residual window (documented, not closed): kafkajs retries a commit that failed with a
 * retriable error (e.g. a coordinator move) using the consumer's generation at the time
 * of the retry; if a rebalance completed in between and moved the partition elsewhere,
 * that retry can advance the new owner's offset. Kafka's classic group protocol offers
 * no fencing for this from outside the client.
 */
import { randomBytes } from 'node:crypto';
import { type Consumer, type EachBatchPayload, Kafka, type KafkaConfig } from 'kafkajs';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';
import type { MethodError } from '../errors.ts';
import type { BrokerHealth } from '../health.ts';
import { describeKafkaError } from '../kafka/errors.ts';
import type { Logger } from '../logger.ts';
import { ChangeSignal, Mutex } from '../util/sync.ts';
import { subscriptionRoundRobin } from './assigner.ts';
import { toBufferedMessage } from './message.ts';
import { MessageBuffer, type TakenMessage } from './message-buffer.ts';

/**
 * Buffer bounds: enough for a few full polls (max is capped at 100) while keeping the
 * worst case (BROKER_MAX_CONSUMERS full buffers of large messages) bounded. Past them the
 * fetch loop waits (see holdWhileFull) until polls have taken the buffer below half.
 */
const BUFFER_MAX_MESSAGES = 1000;
const BUFFER_MAX_BYTES = 8 * 1024 * 1024;
/** A poll result is kept well under the IPC frame limit. */
export const RESULT_BYTE_BUDGET = 8 * 1024 * 1024;
/** Pause between commit attempts (times the attempt number) while the group rebalances. */
const COMMIT_RETRY_PAUSE_MS = 200;
/** Background retries of a failed commit; the next acknowledgement starts a new round. */
const MAX_COMMIT_RETRIES = 10;
/** How long close() waits for running polls and open leases before leaving the group. */
const CLOSE_WAIT_MS = 5000;

export interface GroupConsumerOptions {
  kafkaConfig: KafkaConfig;
  group: string;
  topic: string;
  sessionTimeoutMs: number;
  logger: Logger;
  health: BrokerHealth;
  /** Once a message is ready, a poll waits this long for more before answering (BROKER_CONSUME_LINGER_MS). */
  lingerMs: number;
  /** An unsettled lease is rewound after this long (BROKER_CONSUME_ACK_TIMEOUT_MS). */
  ackTimeoutMs: number;
}

export interface PollRequest {
  max: number;
  /** Date.now() time at which the poll answers with what it has. */
  endAt: number;
  signal: AbortSignal;
  /** Aborts when the link that will settle the lease closes: the lease is then rewound. */
  owner?: AbortSignal;
}

export interface PollOutcome {
  messages: ConsumedMessage[];
  /** Null when nothing was handed out. */
  leaseId: string | null;
  /** The poll ended before this consumer first joined its group. */
  joining: boolean;
}

interface Lease {
  taken: TakenMessage[];
  timer: NodeJS.Timeout;
  owner: AbortSignal | undefined;
  onOwnerGone: () => void;
}

type State = 'starting' | 'running' | 'closing' | 'closed';

export class GroupConsumer {
  readonly group: string;
  readonly topic: string;
  lastUsedAt = Date.now();
  activePolls = 0;

  private readonly consumer: Consumer;
  private readonly buffer = new MessageBuffer();
  private readonly changed = new ChangeSignal();
  /** Wakes a fetch loop held in holdWhileFull: polls took messages, partitions left, or closing. */
  private readonly room = new ChangeSignal();
  private readonly commitLock = new Mutex();
  private readonly log: Logger;
  private readonly heartbeatInterval: number;
  private state: State = 'starting';
  private failure: MethodError | null = null;
  private joinedOnce = false;
  private readonly leases = new Map<string, Lease>();
  /** Lease ids are unique across consumers and worker restarts, so a stale settle matches nothing. */
  private readonly leasePrefix = `${randomBytes(6).toString('hex')}.`;
  private leaseCounter = 0;
  /** Last offset committed per partition, with the incarnation it was committed under. */
  private readonly committed = new Map<number, { incarnation: number; offset: number }>();
  private queuedFlush: Promise<void> | null = null;
  private commitFailures = 0;
  private memberId: string | null = null;

  constructor(private readonly options: GroupConsumerOptions) {
    this.group = options.group;
    this.topic = options.topic;
    this.log = options.logger.child({ group: options.group, topic: options.topic });
    // A Kafka client of its own: kafkajs shares a committed-offsets cache per group between
    // consumers of one client, and a rejoin of one consumer clears the other's entries.
    const kafka = new Kafka(options.kafkaConfig);
    const heartbeatInterval = Math.min(1000, Math.floor(options.sessionTimeoutMs / 3));
    this.heartbeatInterval = heartbeatInterval;
    this.consumer = kafka.consumer({
      groupId: options.group,
      partitionAssigners: [subscriptionRoundRobin],
      sessionTimeout: options.sessionTimeoutMs,
      rebalanceTimeout: Math.max(options.sessionTimeoutMs, 20_000),
      heartbeatInterval,
      // Short fetch waits let an idle member notice a rebalance quickly, so a new member
      // (another topic of this group, or another worker) is not kept waiting.
      maxWaitTimeInMs: 1000,
      maxBytes: 2 * 1024 * 1024,
      allowAutoTopicCreation: false,
      retry: { initialRetryTime: 200, maxRetryTime: 3000, retries: 5 },
    });
  }

  get liveState(): State {
    return this.state;
  }

  get failed(): MethodError | null {
    return this.failure;
  }

  get buffered(): number {
    return this.buffer.count;
  }

  /** Connects, subscribes and starts fetching in the background; failures surface in polls. */
  start(): void {
    const { GROUP_JOIN, CRASH, REBALANCING } = this.consumer.events;
    this.consumer.on(GROUP_JOIN, (event) =>
      this.onJoin(event.payload.memberAssignment[this.topic] ?? [], event.payload.memberId),
    );
    this.consumer.on(CRASH, (event) => this.onCrash(event.payload.error, event.payload.restart));
    this.consumer.on(REBALANCING, () => this.log.debug('group is rebalancing'));
    void this.run().catch((error: unknown) =>
      this.fail(describeKafkaError(error, `join consumer group "${this.group}"`)),
    );
  }

  private async run(): Promise<void> {
    await this.consumer.connect();
    // New groups start at the earliest offset: messages published before the first poll
    // of a task queue are work to do, not history to skip.
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    if (this.state !== 'starting') return;
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      eachBatch: async (payload) => this.onBatch(payload),
    });
    if (this.state === 'starting') this.state = 'running';
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    if (this.state === 'closed') return;
    const { batch } = payload;
    const items = batch.messages.map((m) => toBufferedMessage(this.topic, batch.partition, m));
    if (this.buffer.append(batch.partition, items) > 0) {
      this.options.health.recordSuccess();
      this.changed.notify();
    }
    if (this.buffer.count >= BUFFER_MAX_MESSAGES || this.buffer.bytes >= BUFFER_MAX_BYTES) {
      await this.holdWhileFull(payload);
    }
  }

  /**
   * Backpressure: keeps kafkajs's fetch loop (which waits for eachBatch before fetching
   * again) here until polls have taken the buffer below half its bounds, heartbeating so
   * the group keeps this member.
   *
   * Not consumer.pause(): while every partition is paused, kafkajs sleeps maxWaitTimeInMs
   * between checks, so after a resume the buffer could run dry and polls stall for up to
   * that long although Kafka has the messages. Returning from here fetches at once.
   *
   * A heartbeat that reports a rebalance throws; the error leaves eachBatch and kafkajs
   * rejoins (as it does for its own heartbeats). Nothing is lost: these messages are in
   * the buffer, and kept partitions drop re-fetched duplicates by offset.
   */
  private async holdWhileFull({ heartbeat, isRunning }: EachBatchPayload): Promise<void> {
    const mustHold = () =>
      this.state !== 'closed' &&
      isRunning() &&
      (this.buffer.count >= BUFFER_MAX_MESSAGES / 2 || this.buffer.bytes >= BUFFER_MAX_BYTES / 2);
    while (mustHold()) {
      await this.room.wait(this.heartbeatInterval);
      if (!mustHold()) return;
      await heartbeat();
    }
  }

  private onJoin(partitions: number[], memberId: string): void {
    this.joinedOnce = true;
    // Partitions kept across a rebalance keep their buffer and open leases only if this
    // member stayed in the group throughout (same member id: a member that was dropped
    // rejoins under a new id); otherwise another member may have owned and committed
    // them meanwhile.
    if (this.memberId !== null && this.memberId !== memberId) this.buffer.reset();
    this.memberId = memberId;
    this.buffer.assign(partitions);
    this.log.debug({ partitions }, 'joined group');
    this.options.health.recordSuccess();
    this.changed.notify();
    this.room.notify();
  }

  private onCrash(error: Error, restart: boolean): void {
    // kafkajs left the group before restarting: the partitions may be someone else's now.
    this.buffer.reset();
    this.room.notify();
    const described = describeKafkaError(
      error,
      `read topic "${this.topic}" with consumer group "${this.group}"`,
    );
    this.log.warn({ err: described.message, restart }, 'group consumer crashed');
    if (!restart) this.fail(described);
    this.changed.notify();
  }

  private fail(error: MethodError): void {
    if (this.failure) return;
    this.failure = error;
    this.changed.notify();
  }

  /**
   * Waits until `max` messages are buffered, until `lingerMs` has passed since the first
   * message was ready, or until `endAt`; then takes up to `max` and hands them out under a
   * lease. Nothing is committed here: see settle(). Throws CANCELLED/DEADLINE_EXCEEDED
   * (taking nothing) when the signal aborts first.
   */
  async poll(request: PollRequest): Promise<PollOutcome> {
    this.activePolls += 1;
    this.lastUsedAt = Date.now();
    let readySince: number | null = null;
    try {
      while (true) {
        if (this.failure) throw this.failure;
        if (request.signal.aborted) throw request.signal.reason;
        const now = Date.now();
        const timeUp = now >= request.endAt || this.state === 'closing' || this.state === 'closed';
        if (this.buffer.count > 0) readySince ??= now;
        const lingered = readySince !== null && now >= readySince + this.options.lingerMs;
        if (timeUp || lingered || this.buffer.count >= request.max) {
          const taken = this.state === 'closed' ? [] : this.buffer.take(request.max, RESULT_BYTE_BUDGET);
          if (taken.length > 0) return { ...this.lease(taken, request.owner), joining: false };
          if (timeUp) return { messages: [], leaseId: null, joining: !this.joinedOnce };
          // Another poll took what was there: wait for the next message.
          readySince = null;
          continue;
        }
        const wakeAt =
          readySince === null ? request.endAt : Math.min(request.endAt, readySince + this.options.lingerMs);
        await this.changed.wait(wakeAt - now, request.signal);
      }
    } finally {
      this.activePolls -= 1;
      this.lastUsedAt = Date.now();
    }
  }

  /** Outstanding leases (handed out, neither committed nor rewound yet). */
  get leasesOutstanding(): number {
    return this.leases.size;
  }

  /** Whether a poll or an unsettled lease still needs this consumer. */
  get busy(): boolean {
    return this.activePolls > 0 || this.leases.size > 0;
  }

  private lease(
    taken: TakenMessage[],
    owner: AbortSignal | undefined,
  ): { messages: ConsumedMessage[]; leaseId: string } {
    const id = `${this.leasePrefix}${++this.leaseCounter}`;
    const onOwnerGone = () => this.rewind(id, 'the gateway link closed');
    const timer = setTimeout(() => this.rewind(id, 'no acknowledgement in time'), this.options.ackTimeoutMs);
    timer.unref();
    this.leases.set(id, { taken, timer, owner, onOwnerGone });
    this.room.notify();
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

  /** Whether this consumer holds the lease. */
  holds(id: string): boolean {
    return this.leases.has(id);
  }

  /**
   * The answer was written to the caller: its messages no longer hold back the committed
   * offset. Resolves once the resulting commit was attempted (a failure is retried in the
   * background; until it succeeds the messages would merely be delivered again).
   */
  async commitLease(id: string): Promise<boolean> {
    if (!this.release(id)) return false;
    await this.flushCommits();
    return true;
  }

  /** The answer never reached the caller: its messages go back for the next poll. */
  rewind(id: string, why = 'the answer could not be written to the caller'): boolean {
    const lease = this.release(id);
    if (!lease) return false;
    const restored = this.buffer.putBack(lease.taken);
    this.log.debug({ lease: id, count: lease.taken.length, restored, why }, 'lease rewound');
    this.changed.notify();
    return true;
  }

  /**
   * Per assigned partition, the offset to commit: the lowest offset not yet acknowledged,
   * whether still buffered or handed out under an open lease, or one past the last fetched
   * message when everything fetched was acknowledged. Leases of an ended incarnation (the
   * partition moved away meanwhile) hold nothing back and are never committed.
   */
  private commitTargets(): Map<number, number> {
    const targets = new Map<number, number>();
    for (const partition of this.buffer.assignedPartitions()) {
      const fetched = this.buffer.fetchedUpTo(partition);
      if (fetched === undefined) continue;
      const incarnation = this.buffer.incarnationOf(partition);
      let low = Math.min(fetched, this.buffer.lowestBuffered(partition) ?? fetched);
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

  /** Commits what acknowledgements allow; concurrent requests share one queued round. */
  private flushCommits(): Promise<void> {
    if (this.queuedFlush) return this.queuedFlush;
    const round = this.commitLock.run(async () => {
      this.queuedFlush = null;
      await this.commitOnce();
    });
    this.queuedFlush = round;
    return round;
  }

  private async commitOnce(): Promise<void> {
    if (this.state === 'closed') return;
    const targets = this.commitTargets();
    if (targets.size === 0) return;
    const incarnations = new Map([...targets.keys()].map((p) => [p, this.buffer.incarnationOf(p)]));
    try {
      await this.commit(targets);
      for (const [partition, offset] of targets) {
        const incarnation = incarnations.get(partition);
        if (incarnation !== undefined) this.committed.set(partition, { incarnation, offset });
      }
      this.commitFailures = 0;
      this.options.health.recordSuccess();
    } catch (error) {
      const described = describeKafkaError(error, `commit offsets of consumer group "${this.group}"`);
      this.commitFailures += 1;
      this.log.warn(
        { err: described.message, attempt: this.commitFailures },
        'commit failed; acknowledged messages stay uncommitted and the commit is retried',
      );
      if (this.commitFailures <= MAX_COMMIT_RETRIES && (this.state as State) !== 'closed') {
        const retry = setTimeout(() => void this.flushCommits(), COMMIT_RETRY_PAUSE_MS * this.commitFailures);
        retry.unref();
      }
    }
  }

  private async commit(offsets: Map<number, number>): Promise<void> {
    await this.consumer.commitOffsets(
      [...offsets].map(([partition, offset]) => ({ topic: this.topic, partition, offset: String(offset) })),
    );
  }

  /** Whether the first join has completed (a poll before it is still waiting on the broker). */
  get joined(): boolean {
    return this.joinedOnce;
  }

  /**
   * Lets running polls answer with what they have, then leaves the group. Buffered
   * messages were never committed, so the group hands them out again later.
   */
  async close(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    this.changed.notify();
    // Polls answer with what they have; their leases get a moment to be settled (the
    // answers are on their way to callers) so the last commits go out before leaving.
    const waitUntil = Date.now() + CLOSE_WAIT_MS;
    while (this.busy && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
    await this.flushCommits();
    this.state = 'closed';
    for (const id of [...this.leases.keys()]) this.release(id);
    // Lets a fetch loop held in holdWhileFull go, or kafkajs's stop would wait for it.
    this.room.notify();
    try {
      await this.consumer.disconnect();
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'error while leaving the group');
    }
    this.buffer.reset();
  }
}
