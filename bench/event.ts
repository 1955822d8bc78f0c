/**
 * The event namespace under load, each figure next to what a user would otherwise run:
 * publishes against kafkajs sends, and warm group polls against a consumer built per call
 * (the worker's memory with many groups is in event-scale.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../broker-worker/kafka/create-topics.ts';
import { BrokerWorkerClient } from '../gateway/broker-client/index.ts';
import { type BenchChild, startChild } from './child.ts';
import { retryRetriable } from './kafka-retry.ts';
import { callTool, toolsCallBody } from './mcp-call.ts';
import { closedLoop, summarize } from './stats.ts';

export interface Stack {
  url: string;
  socket: string;
  key: string;
  gateway: BenchChild;
  worker: BenchChild;
  stop(): Promise<void>;
}

export async function startStack(
  bootstrap: string,
  extraWorkerEnv: Record<string, string> = {},
  extraGatewayEnv: Record<string, string> = {},
): Promise<Stack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-bench-stack-'));
  const socket = join(dataDir, 'broker-worker.sock');
  const env = {
    DATA_DIR: dataDir,
    BROKER_BOOTSTRAP_SERVERS: bootstrap,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_WORKERS: `unix:${socket}`,
    BROKER_WORKER_LISTEN: `unix:${socket}`,
    LOG_LEVEL: 'warn',
  };
  const worker = await startChild('bench/servers/broker-worker.ts', { ...env, ...extraWorkerEnv });
  const gateway = await startChild('bench/servers/gateway.ts', { ...env, ...extraGatewayEnv });
  return {
    url: `http://127.0.0.1:${gateway.info.port}/event/mcp`,
    socket,
    key: String(gateway.info.key),
    gateway,
    worker,
    async stop() {
      await gateway.stop();
      await worker.stop();
    },
  };
}

/** A bootstrap list as `npm run kafka` prints it (`host:port,host:port`), as kafkajs takes it. */
export const brokerList = (bootstrap: string): string[] => bootstrap.split(',');

/** One admin call on a fresh client, disconnected even when the call fails. */
async function withAdmin<T>(bootstrap: string, use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka({ brokers: brokerList(bootstrap), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

/** Replication of a bench topic: 1 on one broker; 3 with min.insync.replicas=2 on the three-broker cluster. */
export interface TopicReplication {
  replicationFactor: number;
  minInsyncReplicas?: number;
}

export async function createTopic(
  bootstrap: string,
  topic: string,
  partitions: number,
  replication: TopicReplication = { replicationFactor: 1 },
): Promise<void> {
  const configEntries =
    replication.minInsyncReplicas === undefined
      ? []
      : [{ name: 'min.insync.replicas', value: String(replication.minInsyncReplicas) }];
  await retryRetriable(() =>
    withAdmin(bootstrap, (admin) =>
      createTopicsAndWait(admin, [
        { topic, numPartitions: partitions, replicationFactor: replication.replicationFactor, configEntries },
      ]),
    ),
  );
}

/**
 * Records in the topic now. Asked right after createTopic, the partitions' leadership may
 * still be settling (NOT_LEADER_OR_FOLLOWER on a fresh machine): retried, each time on a
 * new client so the metadata is read again.
 */
async function messagesIn(bootstrap: string, topic: string): Promise<number> {
  const offsets = await retryRetriable(() => withAdmin(bootstrap, (admin) => admin.fetchTopicOffsets(topic)));
  return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
}

export interface PublishRow {
  concurrency: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  kafkajsRps: number;
  kafkajsP50Ms: number;
  kafkajsP99Ms: number;
  /** The same publishes straight to the worker over IPC: shows which hop a low ratio comes from. */
  ipcRps: number;
  ipcP50Ms: number;
}

/** event_publish of 1 KiB values under autocannon on an existing topic; every answer checked against the topic. */
export async function publishRun(
  bootstrap: string,
  stack: Stack,
  topic: string,
  concurrency: number,
  durationSeconds: number,
): Promise<{ rps: number; p50Ms: number; p99Ms: number }> {
  const value = 'x'.repeat(1024);
  const before = await messagesIn(bootstrap, topic);
  await callTool(stack.url, stack.key, 'event_publish', { topic, value, key: 'warm' });
  const result = await autocannon({
    url: stack.url,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': stack.key,
    },
    // Keys vary per request so records spread over partitions as keyed tasks would.
    requests: Array.from({ length: 64 }, (_, i) => ({
      body: toolsCallBody('event_publish', { topic, value, key: `k${i}` }),
    })),
    connections: concurrency,
    duration: durationSeconds,
  });
  const written = (await messagesIn(bootstrap, topic)) - before - 1;
  // Every answered call must be a record in the topic, or the rate means nothing.
  if (written < result.requests.total || result.non2xx > 0) {
    throw new Error(
      `publish c${concurrency}: ${result.requests.total} answered, ${written} in the topic, ${result.non2xx} non-2xx`,
    );
  }
  return { rps: Math.round(result.requests.average), p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}

/**
 * event_publish's worker call without the HTTP hop: `concurrency` callers of the worker's
 * `publish` over the same IPC link a gateway uses, with the two headers the gateway's stamp
 * adds, for `durationSeconds`.
 */
export async function ipcPublishRun(
  stack: Stack,
  topic: string,
  concurrency: number,
  durationSeconds: number,
): Promise<{ rps: number; p50Ms: number }> {
  const client = BrokerWorkerClient.fromEnv({ BROKER_WORKERS: `unix:${stack.socket}` });
  const value = 'x'.repeat(1024);
  const headers = { 'mcp-publisher': 'bench', 'mcp-published-at': new Date().toISOString() };
  const publish = (key: string) =>
    client.call('publish', { topic, value, key, headers }, { timeoutMs: 10_000 });
  try {
    await publish('warm');
    const stats = await closedLoop(concurrency, durationSeconds * 1000, publish);
    return { rps: stats.rps, p50Ms: stats.p50Ms };
  } finally {
    await client.close();
  }
}

/** Two equal-length runs as one: mean rate and p50, the worse p99. */
function pooled(runs: Array<{ rps: number; p50Ms: number; p99Ms: number }>) {
  const mean = (pick: (run: (typeof runs)[number]) => number) =>
    Math.round((runs.reduce((sum, run) => sum + pick(run), 0) / runs.length) * 100) / 100;
  return {
    rps: Math.round(mean((r) => r.rps)),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
  };
}

export async function benchPublish(
  bootstrap: string,
  stack: Stack,
  concurrencies: number[],
  durationSeconds: number,
  log: (line: string) => void,
  replication: TopicReplication = { replicationFactor: 1 },
): Promise<PublishRow[]> {
  const rows: PublishRow[] = [];
  for (const concurrency of concurrencies) {
    const ours = `bench-pub-${concurrency}-${Date.now().toString(36)}`;
    const theirs = `${ours}-kafkajs`;
    await createTopic(bootstrap, ours, 3, replication);
    await createTopic(bootstrap, theirs, 3, replication);
    const kafkajsRun = async (seconds: number) => {
      const child = await startChild('bench/servers/kafkajs-publisher.ts', {
        BOOTSTRAP: bootstrap,
        TOPIC: theirs,
        CONCURRENCY: String(concurrency),
        DURATION_MS: String(seconds * 1000),
      });
      await child.stop();
      return {
        rps: Number(child.info.rps),
        p50Ms: Number(child.info.p50Ms),
        p99Ms: Number(child.info.p99Ms),
      };
    };
    // A fresh broker answers its first seconds of produce requests slowly (its JIT is still
    // compiling): both sides warm up first, then run twice in turn, so neither is measured
    // on a colder broker than the other.
    log(`publish: warming the broker at concurrency ${concurrency} (both sides, not measured)`);
    const half = Math.max(1, Math.round(durationSeconds / 2));
    await publishRun(bootstrap, stack, ours, concurrency, half);
    await kafkajsRun(half);
    const oursRuns = [];
    const theirRuns = [];
    for (let round = 0; round < 2; round++) {
      log(`publish: event_publish at concurrency ${concurrency} (round ${round + 1} of 2)`);
      oursRuns.push(await publishRun(bootstrap, stack, ours, concurrency, half));
      log(`publish: kafkajs producer.send at concurrency ${concurrency} (round ${round + 1} of 2)`);
      theirRuns.push(await kafkajsRun(half));
    }
    const result = pooled(oursRuns);
    const baseline = { info: pooled(theirRuns) };
    const ipc = await ipcPublishRun(stack, ours, concurrency, durationSeconds);
    log(
      `publish c${concurrency}: HTTP ${result.rps} rps, IPC alone ${ipc.rps} rps (p50 ${ipc.p50Ms} ms), kafkajs ${String(baseline.info.rps)} rps (p50 ${String(baseline.info.p50Ms)} ms)`,
    );
    rows.push({
      concurrency,
      ...result,
      kafkajsRps: Number(baseline.info.rps),
      kafkajsP50Ms: Number(baseline.info.p50Ms),
      kafkajsP99Ms: Number(baseline.info.p99Ms),
      ipcRps: ipc.rps,
      ipcP50Ms: ipc.p50Ms,
    });
  }
  return rows;
}

export interface ConsumeResults {
  warmP50Ms: number;
  warmP99Ms: number;
  warmPolls: number;
  ephemeralP50Ms: number;
  ephemeralP99Ms: number;
  ephemeralPolls: number;
  firstPollMs: number;
  firstPollCount: number;
  /** A bare kafkajs commitOffsets on the same broker: the floor a poll sat on when it committed before answering. */
  commitFloorP50Ms: number;
  commitFloorP99Ms: number;
}

async function commitFloor(
  kafka: Kafka,
  topic: string,
  commits: number,
): Promise<{ p50Ms: number; p99Ms: number }> {
  const consumer = kafka.consumer({ groupId: 'bench-commit-floor' });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const latencies: number[] = [];
  await new Promise<void>((resolve) => {
    let done = false;
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (done) return;
        done = true;
        const offset = String(Number(batch.messages[0]?.offset ?? 0) + 1);
        for (let i = 0; i < commits; i++) {
          const started = performance.now();
          await consumer.commitOffsets([{ topic, partition: batch.partition, offset }]);
          latencies.push(performance.now() - started);
        }
        resolve();
      },
    });
  });
  await consumer.disconnect();
  const stats = summarize(latencies, 1);
  return { p50Ms: stats.p50Ms, p99Ms: stats.p99Ms };
}

/** Runs on a broker with Kafka's default 3000 ms initial rebalance delay, as managed services have. */
export async function benchConsume(
  bootstrap: string,
  stack: Stack,
  warmPolls: number,
  ephemeralPolls: number,
  log: (line: string) => void,
): Promise<ConsumeResults> {
  const topic = `bench-consume-${Date.now().toString(36)}`;
  await createTopic(bootstrap, topic, 3);
  const producer = new Kafka({ brokers: brokerList(bootstrap), logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  const total = (warmPolls + ephemeralPolls + 2) * 10;
  for (let i = 0; i < total; i += 500) {
    const messages = Array.from({ length: Math.min(500, total - i) }, (_, j) => ({
      key: `k${(i + j) % 16}`,
      value: JSON.stringify({ n: i + j }),
    }));
    await producer.send({ topic, acks: -1, messages });
  }
  await producer.disconnect();

  log('consume: first poll of a new group (default rebalance delay)');
  const firstStarted = performance.now();
  const first = await callTool<{ count: number }>(stack.url, stack.key, 'event_consume', {
    topic,
    group: 'bench-warm',
    max: 10,
  });
  const firstPollMs = Math.round(performance.now() - firstStarted);

  log(`consume: ${warmPolls} warm group polls`);
  const warm: number[] = [];
  for (let i = 0; i < warmPolls; i++) {
    const started = performance.now();
    const polled = await callTool<{ count: number }>(stack.url, stack.key, 'event_consume', {
      topic,
      group: 'bench-warm',
      max: 10,
    });
    warm.push(performance.now() - started);
    if (polled.count !== 10)
      throw new Error(`warm poll ${i} returned ${polled.count} messages, expected 10 waiting`);
  }

  log(`consume: ${ephemeralPolls} per-call consumers (join, fetch, commit, leave)`);
  const ephemeral: number[] = [];
  const kafka = new Kafka({ brokers: brokerList(bootstrap), logLevel: logLevel.NOTHING });
  for (let i = 0; i < ephemeralPolls; i++) {
    const started = performance.now();
    const consumer = kafka.consumer({ groupId: 'bench-ephemeral' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let taken = 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (taken >= 10) return;
          taken += 1;
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          if (taken === 10) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    ephemeral.push(performance.now() - started);
  }
  log('consume: bare kafkajs commit latency (the floor)');
  const floor = await commitFloor(kafka, topic, 50);
  const warmStats = summarize(warm, 1);
  const ephemeralStats = summarize(ephemeral, 1);
  return {
    warmP50Ms: warmStats.p50Ms,
    warmP99Ms: warmStats.p99Ms,
    warmPolls,
    ephemeralP50Ms: ephemeralStats.p50Ms,
    ephemeralP99Ms: ephemeralStats.p99Ms,
    ephemeralPolls,
    firstPollMs,
    firstPollCount: first.count,
    commitFloorP50Ms: floor.p50Ms,
    commitFloorP99Ms: floor.p99Ms,
  };
}
