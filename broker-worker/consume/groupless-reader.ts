/**
 * consume with from=earliest|latest: reads every partition of a topic without a consumer
 * group, so no group is joined, no offsets are created and nothing is committed.
 *
 * How: kafkajs consumers always join a group, so this reads the way a group-less Java
 * consumer with assign() does, one level down: ListOffsets gives each partition's start
 * (earliest) or end (latest), then Fetch requests go straight to each partition leader
 * (kafka/internals.ts). Cost per call: one metadata refresh, one ListOffsets round trip
 * and one or more Fetches; no rebalance delay is ever paid. The rejected alternative, a
 * throwaway randomly named group, would pay the broker's group.initial.rebalance.delay.ms
 * (3 s by default) on every call and leave empty groups behind.
 *
 * Connections come from a small pool of raw clusters: a Fetch that long-polls holds its
 * broker connection (Kafka answers a connection's requests in order), so two concurrent
 * reads must not share one.
 */
import type { Kafka } from 'kafkajs';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';
import { MethodError } from '../errors.ts';
import { describeKafkaError } from '../kafka/errors.ts';
import {
  createRawCluster,
  decodeBatch,
  type RawBroker,
  type RawCluster,
  type RawFetchResponse,
  READ_COMMITTED,
} from '../kafka/internals.ts';
import { ChangeSignal } from '../util/sync.ts';
import { type BufferedMessage, toBufferedMessage } from './message.ts';

const POOL_MAX_IDLE = 8;
/** Longest a single Fetch waits on the broker; the loop fetches again while time remains. */
const FETCH_MAX_WAIT_MS = 500;
const FETCH_MAX_BYTES = 8 * 1024 * 1024;
const PARTITION_MAX_BYTES = 1024 * 1024;

export interface GrouplessRead {
  topic: string;
  from: 'earliest' | 'latest';
  max: number;
  endAt: number;
  signal: AbortSignal;
  /** Ends the read as if `endAt` had come (a draining gateway wants the answer now). */
  answerNow?: AbortSignal;
  byteBudget: number;
}

export class GrouplessReader {
  private readonly idle: RawCluster[] = [];
  private closed = false;

  constructor(private readonly kafka: Kafka) {}

  async read(request: GrouplessRead): Promise<ConsumedMessage[]> {
    const cluster = await this.checkout();
    let outcome: Awaited<ReturnType<typeof readWith>>;
    try {
      outcome = await readWith(cluster, request);
    } catch (error) {
      this.checkin(cluster, false);
      throw error;
    }
    // Another leader's Fetch may still be long-polling on this cluster's connections; the
    // cluster goes back to the pool only when it is quiet.
    void outcome.settled.then(() => this.checkin(cluster, true));
    return outcome.messages;
  }

  private async checkout(): Promise<RawCluster> {
    const ready = this.idle.pop();
    if (ready) return ready;
    const cluster = createRawCluster(this.kafka);
    try {
      await cluster.connect();
    } catch (error) {
      void cluster.disconnect().catch(() => undefined);
      throw error;
    }
    return cluster;
  }

  private checkin(cluster: RawCluster, healthy: boolean): void {
    if (!this.closed && healthy && this.idle.length < POOL_MAX_IDLE) this.idle.push(cluster);
    else void cluster.disconnect().catch(() => undefined);
  }

  /**
   * Drops pooled connections. Called after a topic is deleted: kafkajs fails every
   * metadata refresh of a cluster that once read a topic that no longer exists.
   */
  flush(): void {
    for (const cluster of this.idle.splice(0)) void cluster.disconnect().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((c) => c.disconnect().catch(() => undefined)));
  }
}

/** The topic's partitions, each with the offset the read starts from (its start or its end). */
async function startPositions(
  cluster: RawCluster,
  { topic, from }: GrouplessRead,
): Promise<{ partitions: number[]; position: Map<number, string> }> {
  await cluster.addMultipleTargetTopics([topic]);
  const partitions = cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
  if (partitions.length === 0) throw new MethodError('UNKNOWN_TOPIC', `Topic "${topic}" has no partitions.`);

  const starts = await cluster.fetchTopicsOffset([
    {
      topic,
      partitions: partitions.map((partition) => ({ partition })),
      fromBeginning: from === 'earliest',
    },
  ]);
  const position = new Map<number, string>();
  for (const entry of starts.find((t) => t.topic === topic)?.partitions ?? [])
    position.set(entry.partition, entry.offset);
  return { partitions, position };
}

/** What one read has gathered so far, shared by its per-leader fetch loops; `position` is each partition's next offset. */
class Collected {
  readonly perPartition = new Map<number, BufferedMessage[]>();
  readonly changed = new ChangeSignal();
  count = 0;
  bytes = 0;
  failure: unknown = null;
  running = 0;

  constructor(
    readonly request: GrouplessRead,
    readonly position: Map<number, string>,
  ) {}

  finished(): boolean {
    const { request } = this;
    return (
      this.count >= request.max ||
      this.bytes >= request.byteBudget ||
      Date.now() >= request.endAt ||
      request.answerNow?.aborted === true ||
      request.signal.aborted ||
      this.failure !== null
    );
  }

  /** Takes one Fetch answer: advances each partition's position and keeps its messages. */
  absorb(response: RawFetchResponse): void {
    const { topic } = this.request;
    for (const topicData of response.responses) {
      for (const data of topicData.partitions) {
        const fetchedOffset = this.position.get(data.partition) ?? '0';
        const batch = decodeBatch(topic, fetchedOffset, data);
        const last = batch.messagesWithinOffset.at(-1);
        if (last) this.position.set(data.partition, (BigInt(last.offset) + 1n).toString());
        if (batch.messages.length === 0) continue;
        const list = this.perPartition.get(data.partition) ?? [];
        for (const message of batch.messages) {
          const item = toBufferedMessage(topic, data.partition, message);
          list.push(item);
          this.count += 1;
          this.bytes += item.bytes;
        }
        this.perPartition.set(data.partition, list);
      }
    }
    this.changed.notify();
  }
}

function fetchFrom(broker: RawBroker, owned: number[], collected: Collected): Promise<RawFetchResponse> {
  const { topic, endAt } = collected.request;
  return broker.fetch({
    isolationLevel: READ_COMMITTED,
    maxWaitTime: Math.max(0, Math.min(FETCH_MAX_WAIT_MS, endAt - Date.now())),
    minBytes: 1,
    maxBytes: FETCH_MAX_BYTES,
    topics: [
      {
        topic,
        partitions: owned.map((partition) => ({
          partition,
          fetchOffset: collected.position.get(partition) ?? '0',
          maxBytes: PARTITION_MAX_BYTES,
        })),
      },
    ],
  });
}

/** Fetches the partitions one leader owns until the read is finished; a failure ends every loop. */
async function fetchLoop(
  cluster: RawCluster,
  nodeId: string,
  owned: number[],
  collected: Collected,
): Promise<void> {
  collected.running += 1;
  try {
    const broker = await cluster.findBroker({ nodeId });
    while (!collected.finished()) collected.absorb(await fetchFrom(broker, owned, collected));
  } catch (error) {
    collected.failure ??= error;
  } finally {
    collected.running -= 1;
    collected.changed.notify();
  }
}

async function readWith(
  cluster: RawCluster,
  request: GrouplessRead,
): Promise<{ messages: ConsumedMessage[]; settled: Promise<unknown> }> {
  const { topic } = request;
  const { partitions, position } = await startPositions(cluster, request);
  const collected = new Collected(request, position);
  const leaders = cluster.findLeaderForPartitions(topic, partitions);
  const loops = Object.entries(leaders).map(([nodeId, owned]) =>
    fetchLoop(cluster, nodeId, owned, collected),
  );

  while (!collected.finished() && collected.running > 0)
    await collected.changed.wait(request.endAt - Date.now(), request.signal, request.answerNow);
  if (request.signal.aborted) {
    void Promise.allSettled(loops);
    throw request.signal.reason;
  }
  if (collected.failure !== null && collected.count === 0) {
    throw describeKafkaError(collected.failure, `read topic "${topic}" from ${request.from}`);
  }
  return {
    messages: mergeByTimestamp(collected.perPartition, request.max, request.byteBudget),
    settled: Promise.allSettled(loops),
  };
}

/**
 * Oldest first across partitions while keeping each partition's own order (producer
 * timestamps need not be monotonic within a partition, so a plain sort could reorder it).
 */
function mergeByTimestamp(
  perPartition: Map<number, BufferedMessage[]>,
  max: number,
  byteBudget: number,
): ConsumedMessage[] {
  const queues = [...perPartition.values()].map((list) => ({ list, next: 0 }));
  const out: ConsumedMessage[] = [];
  let bytes = 0;
  while (out.length < max) {
    let best: (typeof queues)[number] | undefined;
    for (const q of queues) {
      const head = q.list[q.next];
      if (!head) continue;
      const bestHead = best?.list[best.next];
      if (!bestHead || head.message.timestamp < bestHead.message.timestamp) best = q;
    }
    if (!best) break;
    const item = best.list[best.next]!;
    if (out.length > 0 && bytes + item.bytes > byteBudget) break;
    best.next += 1;
    bytes += item.bytes;
    out.push(item.message);
  }
  return out;
}
