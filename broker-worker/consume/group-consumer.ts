/**
 * One warm kafkajs consumer for a (group, topic), shared by every poll of that pair.
 *
 * kafkajs has no poll(): a running consumer pushes batches to `eachBatch`. Here eachBatch
 * appends to a bounded MessageBuffer (holding the fetch loop while the buffer is full),
 * and a poll takes from the buffer. Offsets are committed by the poll, for exactly the
 * messages it returns, before it answers; autoCommit is off, so kafkajs never commits on
 * its own.
 *
 * Take-and-commit runs under a per-consumer lock, so concurrent polls never share a
 * message and commits of one partition are sent in offset order. A poll that is cancelled
 * takes nothing; one cancelled while its commit is in flight rewinds the commit and puts
 * its messages back, so a later poll hands them out.
 *
 * Residual window (documented, not closed): kafkajs retries a commit that failed with a
 * retriable error (e.g. a coordinator move) using the consumer's generation at the time
 * of the retry; if a rebalance completed in between and moved the partition elsewhere,
 * that retry can advance the new owner's offset. Kafka's classic group protocol offers
 * no fencing for this from outside the client.
 */
import { type Consumer, type EachBatchPayload, Kafka, type KafkaConfig } from 'kafkajs';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';
import { MethodError } from '../errors.ts';
import type { BrokerHealth } from '../health.ts';
import { describeKafkaError } from '../kafka/errors.ts';
import type { Logger } from '../logger.ts';
import { ChangeSignal, Mutex } from '../util/sync.ts';
import { subscriptionRoundRobin } from './assigner.ts';
import { toBufferedMessage } from './message.ts';
import { commitOffsetsFor, MessageBuffer, rewindOffsetsFor, type TakenMessage } from './message-buffer.ts';

/**
 * Buffer bounds: enough for a few full polls (max is capped at 100) while keeping the
 * worst case (BROKER_MAX_CONSUMERS full buffers of large messages) bounded. Past them the
 * fetch loop waits (see holdWhileFull) until polls have taken the buffer below half.
 */
const BUFFER_MAX_MESSAGES = 1000;
const BUFFER_MAX_BYTES = 8 * 1024 * 1024;
/** A poll result is kept well under the IPC frame limit. */
export const RESULT_BYTE_BUDGET = 8 * 1024 * 1024;
/** Pause between commit attempts while the group rebalances. */
const COMMIT_RETRY_PAUSE_MS = 200;

export interface GroupConsumerOptions {
  kafkaConfig: KafkaConfig;
  group: string;
  topic: string;
  sessionTimeoutMs: number;
  logger: Logger;
  health: BrokerHealth;
}

export interface PollRequest {
  max: number;
  /** Date.now() time at which the poll answers with what it has. */
  endAt: number;
  signal: AbortSignal;
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
    this.consumer.on(GROUP_JOIN, (event) => this.onJoin(event.payload.memberAssignment[this.topic] ?? []));
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

  private onJoin(partitions: number[]): void {
    this.joinedOnce = true;
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
    this.options.health.recordError(described.message);
    this.log.warn({ err: described.message, restart }, 'group consumer crashed');
    if (!restart) this.fail(described);
    this.changed.notify();
  }

  private fail(error: MethodError): void {
    if (this.failure) return;
    this.failure = error;
    this.options.health.recordError(error.message);
    this.changed.notify();
  }

  /**
   * Waits until `max` messages are buffered or `endAt`, then takes up to `max`, commits
   * them and returns them. Throws CANCELLED/DEADLINE_EXCEEDED (taking nothing) when the
   * signal aborts first.
   */
  async poll(request: PollRequest): Promise<ConsumedMessage[]> {
    this.activePolls += 1;
    this.lastUsedAt = Date.now();
    let lastCommitError: MethodError | null = null;
    try {
      while (true) {
        if (this.failure) throw this.failure;
        if (request.signal.aborted) throw request.signal.reason;
        const timeUp = Date.now() >= request.endAt || this.state === 'closing' || this.state === 'closed';
        if (timeUp || this.buffer.count >= request.max) {
          const outcome = await this.commitLock.run(() => this.takeAndCommit(request, timeUp));
          if (outcome.kind === 'done') return outcome.messages;
          if (outcome.kind === 'retry') {
            lastCommitError = outcome.error;
            if (Date.now() >= request.endAt) throw lastCommitError;
            await this.changed.wait(
              Math.min(COMMIT_RETRY_PAUSE_MS, request.endAt - Date.now()),
              request.signal,
            );
          }
          continue;
        }
        await this.changed.wait(request.endAt - Date.now(), request.signal);
      }
    } finally {
      this.activePolls -= 1;
      this.lastUsedAt = Date.now();
    }
  }

  private async takeAndCommit(
    request: PollRequest,
    timeUp: boolean,
  ): Promise<
    { kind: 'done'; messages: ConsumedMessage[] } | { kind: 'wait' } | { kind: 'retry'; error: MethodError }
  > {
    if (request.signal.aborted) throw request.signal.reason;
    if (this.failure) throw this.failure;
    // Another poll may have emptied the buffer while this one waited for the lock.
    if (!timeUp && this.buffer.count < request.max && Date.now() < request.endAt) return { kind: 'wait' };
    if (this.state === 'closed') return { kind: 'done', messages: [] };

    const taken = this.buffer.take(request.max, RESULT_BYTE_BUDGET);
    if (taken.length === 0) return { kind: 'done', messages: [] };
    try {
      await this.commit(commitOffsetsFor(taken));
    } catch (error) {
      this.buffer.putBack(taken);
      const described = describeKafkaError(
        error,
        `commit offsets of consumer group "${this.group}" (the group may be rebalancing; poll again)`,
      );
      this.log.debug({ err: described.message }, 'commit failed; messages returned to the buffer');
      if (!described.retriable && !isRebalanceError(error)) throw described;
      return {
        kind: 'retry',
        error: new MethodError('BROKER_ERROR', described.message, true),
      };
    }

    if (request.signal.aborted) {
      // The gateway went away while the commit was in flight: undo it, so the messages are
      // handed out again instead of being committed without anyone receiving them.
      await this.rewind(taken);
      throw request.signal.reason;
    }
    this.options.health.recordSuccess();
    this.room.notify();
    return { kind: 'done', messages: taken.map((t) => t.message) };
  }

  private async commit(offsets: Map<number, number>): Promise<void> {
    await this.consumer.commitOffsets(
      [...offsets].map(([partition, offset]) => ({ topic: this.topic, partition, offset: String(offset) })),
    );
  }

  private async rewind(taken: TakenMessage[]): Promise<void> {
    try {
      await this.commit(rewindOffsetsFor(taken));
    } catch (error) {
      // Still put them back: while this consumer keeps the partition, the next poll hands
      // them out and its commit moves the offset back to them. Only if the partition moves
      // elsewhere first are they skipped by the group.
      this.log.warn(
        { err: (error as Error).message, count: taken.length },
        'could not undo the commit of a cancelled poll; its messages stay buffered for the next poll',
      );
    }
    this.buffer.putBack(taken);
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
    const waitUntil = Date.now() + 5000;
    while (this.activePolls > 0 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
    this.state = 'closed';
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

const REBALANCE_TYPES = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'GROUP_LOAD_IN_PROGRESS',
]);

function isRebalanceError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const e = current as { type?: string; message?: string; cause?: unknown };
    if (REBALANCE_TYPES.has(e.type ?? '')) return true;
    if (/not initialized|not running/i.test(e.message ?? '')) return true;
    current = e.cause;
  }
  return false;
}
