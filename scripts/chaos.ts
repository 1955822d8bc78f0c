/**
 * `npm run chaos`: a bounded campaign of kill -9 against the broker worker and the local
 * Kafka broker while publish and consume loops run through the gateway. Prints published,
 * acknowledged, delivered, lost and duplicated counts; exits 1 when an acknowledged
 * publish is missing from the topic or a message in the topic was never delivered.
 * CHAOS_SECONDS (default 90) bounds the fault phase; draining afterwards is bounded too.
 * `npm run chaos -- fleet` runs the fleet campaign instead (scripts/chaos-fleet.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { type BenchChild, startChild } from '../bench/child.ts';
import { callTool } from '../bench/mcp-call.ts';
import { createTopicsAndWait } from '../broker-worker/kafka/create-topics.ts';
import { type LocalKafka, startLocalKafka } from '../dev/kafka/local-kafka.ts';

if (process.argv[2] === 'fleet') {
  // The fleet campaign runs on its own (scripts/chaos-fleet.ts) and exits from there.
  await import('./chaos-fleet.ts');
}

const seconds = Number(process.env.CHAOS_SECONDS ?? 90);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const kafkaDir = await mkdtemp(join(tmpdir(), 'mcp-chaos-kafka-'));
const stackDir = await mkdtemp(join(tmpdir(), 'mcp-chaos-stack-'));
const ports = {
  plaintextPort: await freePort(),
  controllerPort: await freePort(),
  saslPlaintextPort: await freePort(),
};
const startKafka = () =>
  startLocalKafka({ dataDir: kafkaDir, ...ports, saslSslPort: null, initialRebalanceDelayMs: 0 });
let kafka: LocalKafka = await startKafka();
const bootstrap = kafka.plaintext;
const topic = 'chaos';
const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
await admin.connect();
await createTopicsAndWait(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
await admin.disconnect();

const socket = join(stackDir, 'broker-worker.sock');
const env = {
  DATA_DIR: stackDir,
  BROKER_BOOTSTRAP_SERVERS: bootstrap,
  BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  BROKER_WORKERS: `unix:${socket}`,
  BROKER_WORKER_LISTEN: `unix:${socket}`,
  BROKER_SESSION_TIMEOUT_MS: '6000',
  LOG_LEVEL: 'error',
};
let worker: BenchChild = await startChild('bench/servers/broker-worker.ts', env);
const gateway = await startChild('bench/servers/gateway.ts', env);
const url = `http://127.0.0.1:${gateway.info.port}/event/mcp`;
const key = String(gateway.info.key);

let published = 0;
const acknowledged = new Set<string>();
const deliveries = new Map<string, number>();
let faultsOn = true;
let publishing = true;
let consuming = true;
const counts = { workerKills: 0, brokerKills: 0, publishErrors: 0, pollErrors: 0 };

async function publisher(id: number): Promise<void> {
  for (let n = 0; publishing; n++) {
    const value = `p${id}-${n}`;
    published += 1;
    try {
      await callTool(url, key, 'event_publish', { topic, value, key: `k${n % 13}` });
      acknowledged.add(value);
    } catch {
      counts.publishErrors += 1;
      await sleep(200);
    }
  }
}

async function consumer(): Promise<void> {
  while (consuming) {
    try {
      const polled = await callTool<{ messages: Array<{ value: string }> }>(url, key, 'event_consume', {
        topic,
        group: 'chaos-group',
        max: 20,
        timeout_ms: 2000,
      });
      for (const m of polled.messages) deliveries.set(m.value, (deliveries.get(m.value) ?? 0) + 1);
    } catch {
      counts.pollErrors += 1;
      await sleep(200);
    }
  }
}

async function faults(): Promise<void> {
  for (let round = 0; faultsOn; round++) {
    await sleep(6000 + Math.random() * 4000);
    if (!faultsOn) return;
    if (round % 2 === 0) {
      log('kill -9 broker worker');
      process.kill(Number(worker.info.workerPid), 'SIGKILL');
      await new Promise((resolve) => worker.process.once('exit', resolve));
      counts.workerKills += 1;
      worker = await startChild('bench/servers/broker-worker.ts', env);
    } else {
      log('kill -9 Kafka broker');
      process.kill(kafka.pid, 'SIGKILL');
      counts.brokerKills += 1;
      await sleep(2000);
      kafka = await startKafka();
    }
  }
}

const publishers = [publisher(1), publisher(2)];
const consumers = [consumer(), consumer(), consumer()];
const faulting = faults();
log(`campaign: ${seconds} s of faults`);
await sleep(seconds * 1000);
faultsOn = false;
await faulting;
publishing = false;
// Publishes still in flight finish (and count as acknowledged or not) before the witness reads.
await Promise.all(publishers);
log('faults over; draining');

// The topic itself is the witness: every record it holds, read from the start.
async function topicValues(): Promise<Set<string>> {
  const offsets = await (async () => {
    const a = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
    await a.connect();
    try {
      return await a.fetchTopicOffsets(topic);
    } finally {
      await a.disconnect();
    }
  })();
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const values = new Set<string>();
  let records = 0;
  const reader = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).consumer({
    groupId: `chaos-witness-${Date.now()}`,
  });
  await reader.connect();
  await reader.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    if (total === 0) resolve();
    void reader.run({
      eachMessage: async ({ message }) => {
        records += 1;
        values.add(message.value?.toString() ?? '');
        if (records >= total) resolve();
      },
    });
  });
  await reader.disconnect();
  return values;
}

const inTopic = await topicValues();
const drainUntil = Date.now() + 90_000;
while (Date.now() < drainUntil && [...inTopic].some((v) => !deliveries.has(v))) await sleep(500);
consuming = false;
await Promise.all(consumers);

const lost = [...acknowledged].filter((v) => !inTopic.has(v));
const neverDelivered = [...inTopic].filter((v) => !deliveries.has(v));
const duplicated = [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0);
const summary = {
  seconds,
  ...counts,
  published,
  acknowledged: acknowledged.size,
  inTopic: inTopic.size,
  delivered: deliveries.size,
  lostAcknowledged: lost.length,
  neverDelivered: neverDelivered.length,
  duplicated,
};
console.log(JSON.stringify(summary, null, 2));

await gateway.stop();
await worker.stop();
await kafka.stop();
await rm(kafkaDir, { recursive: true, force: true });
await rm(stackDir, { recursive: true, force: true });
const ok = lost.length === 0 && neverDelivered.length === 0;
console.log(ok ? 'chaos: PASS (0 lost, 0 never delivered)' : 'chaos: FAIL');
process.exit(ok ? 0 : 1);
