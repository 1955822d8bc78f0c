/**
 * One warm kafkajs consumer for a (group, topic), shared by every poll of that pair.
 *
 * kafkajs has no poll(): a running consumer pushes batches to `eachBatch`. Here eachBatch
 * appends to a bounded MessageBuffer (holding the fetch loop while the buffer is full),
 * and a poll takes from the buffer. autoCommit is off, so kafkajs never commits on its own.
 *
 * At-least-once: a poll hands its messages out under a lease and commits nothing; the
 * LeaseBook (lease-book.ts) commits them once the gateway reports the answer written, and
 * puts them back otherwise. While a lease is open, its messages are not handed to anyone
 * else by this consumer.
 */
import { type Consumer, type EachBatchPayload, Kafka, type KafkaConfig } from 'kafkajs';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';
import type { MethodError } from '../errors.ts';
import type { BrokerHealth } from '../health.ts';
import { describeKafkaError } from '../kafka/errors.ts';
import type { Logger } from '../logger.ts';
import { ChangeSignal } from '../util/sync.ts';
import { subscriptionRoundRobin } from './assigner.ts';
import { LeaseBook } from './lease-book.ts';
import { toBufferedMessage } from './message.ts';
import { MessageBuffer } from './message-buffer.ts';

/**
 * Buffer bounds: enough for a few full polls (max is capped at 100) while keeping the
 * worst case (BROKER_MAX_CONSUMERS full buffers of large messages) bounded. Past them the
 * fetch loop waits (see holdWhileFull) until polls have taken the buffer below half.
 */
const BUFFER_MAX_MESSAGES = 1000;
const BUFFER_MAX_BYTES = 8 * 1024 * 1024;
/** A poll result is kept well under the IPC frame limit. */
export const RESULT_BYTE_BUDGET = 8 * 1024 * 1024;
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
  /**
   * Messages handed out and not yet committed, at most (BROKER_CONSUME_UNCOMMITTED_MAX):
   * a worker that dies delivers them all again, so past this polls wait for commits.
   */
  uncommittedMax: number;
}

export interface PollRequest {
  max: number;
  /** Date.now() time at which the poll answers with what it has. */
  endAt: number;
  /**
   * How long past `endAt` the poll may wait for a commit when the uncommitted window is full
   * while messages wait (the call's budget allows it). Default `endAt`.
   */
  windowEndAt?: number;
  signal: AbortSignal;
  /** Aborts when the link that will settle the lease closes: the lease is then rewound. */
  owner?: AbortSignal;
  /** Aborts when the answer is wanted now (a draining gateway): the poll answers with what it has. */
  answerNow?: AbortSignal;
}

export interface PollOutcome {
  messages: ConsumedMessage[];
  /** Null when nothing was handed out. */
  leaseId: string | null;
  /** The poll ended before this consumer first joined its group. */
  joining: boolean;
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
  private readonly log: Logger;
  private readonly leases: LeaseBook;
  private readonly heartbeatInterval: number;
  private state: State = 'starting';
  private failure: MethodError | null = null;
  private joinedOnce = false;
  private memberId: string | null = null;

  constructor(private readonly options: GroupConsumerOptions) {
    this.group = options.group;
    this.topic = options.topic;
    this.log = options.logger.child({ group: options.group, topic: options.topic });
    this.leases = new LeaseBook({
      group: options.group,
      buffer: this.buffer,
      ackTimeoutMs: options.ackTimeoutMs,
      log: this.log,
      health: options.health,
      commit: (offsets) => this.commit(offsets),
      closed: () => this.state === 'closed',
      onLeased: () => this.room.notify(),
      onRewound: () => this.changed.notify(),
      onCommitted: () => this.changed.notify(),
    });
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
   * lease. Nothing is committed here (see LeaseBook). `answerNow` ends the wait as if
   * `endAt` had come. Throws CANCELLED/DEADLINE_EXCEEDED (taking nothing) when the signal
   * aborts first.
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
        const timeUp =
          now >= request.endAt ||
          request.answerNow?.aborted === true ||
          this.state === 'closing' ||
          this.state === 'closed';
        if (this.buffer.count > 0) readySince ??= now;
        const lingered = readySince !== null && now >= readySince + this.options.lingerMs;
        if (timeUp || lingered || this.buffer.count >= request.max) {
          const room = this.options.uncommittedMax - this.leases.uncommitted;
          const taken =
            this.state === 'closed' || room <= 0
              ? []
              : this.buffer.take(Math.min(request.max, room), RESULT_BYTE_BUDGET);
          if (taken.length > 0) return { ...this.leases.lease(taken, request.owner), joining: false };
          const until = Math.max(request.endAt, request.windowEndAt ?? request.endAt);
          const live = this.state === 'running' || this.state === 'starting';
          if (room <= 0 && live && this.buffer.count > 0 && now < until && !request.answerNow?.aborted) {
            // The window is full while messages wait: the commit of an answer just written
            // opens it within moments, so even a poll out of time (timeout_ms 0) waits for
            // it, inside its call's budget. A commit that gave up retrying starts again
            // here, or nothing would ever open the window.
            void this.leases.flush();
            await this.changed.wait(until - now, request.signal, request.answerNow);
            continue;
          }
          if (timeUp) return { messages: [], leaseId: null, joining: !this.joinedOnce };
          // Another poll took what was there: wait for the next message.
          readySince = null;
          continue;
        }
        const wakeAt =
          readySince === null ? request.endAt : Math.min(request.endAt, readySince + this.options.lingerMs);
        await this.changed.wait(wakeAt - now, request.signal, request.answerNow);
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

  /** Messages handed out whose offsets are not committed yet (see LeaseBook.uncommitted). */
  get uncommitted(): number {
    return this.leases.uncommitted;
  }

  /** Messages under open leases (see LeaseBook.leased). */
  get leased(): number {
    return this.leases.leased;
  }

  /** Whether a poll or an unsettled lease still needs this consumer. */
  get busy(): boolean {
    return this.activePolls > 0 || this.leases.size > 0;
  }

  /** Whether this consumer holds the lease. */
  holds(id: string): boolean {
    return this.leases.holds(id);
  }

  /** The answer was written to the caller: see LeaseBook.commitLease. */
  commitLease(id: string): Promise<boolean> {
    return this.leases.commitLease(id);
  }

  /** The answer never reached the caller: its messages go back for the next poll. */
  rewind(id: string, why?: string): boolean {
    return this.leases.rewind(id, why);
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
   * The topic was deleted: leaves the group committing nothing, whatever polls or leases
   * are open. A topic created again under the same name starts over at offset 0, so any
   * offset from the old one (a late acknowledgement, or the position this consumer had
   * fetched to) would move the group past the new topic's first messages. Running polls
   * answer with nothing; open leases are dropped (their settle finds no lease).
   */
  async discard(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.leases.releaseAll();
    this.buffer.reset();
    this.changed.notify();
    this.room.notify();
    try {
      await this.consumer.disconnect();
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'error while leaving the group');
    }
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
    await this.leases.flush();
    this.state = 'closed';
    this.leases.releaseAll();
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
