/**
 * What the publisher-provenance test files share: real gateway processes on one real broker
 * worker, MCP SDK clients, and kafkajs reading and writing records as an outside producer or
 * consumer would.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKeyStore } from '../../../gateway/keys/store.ts';
import { keyStorePath } from '../../../gateway/server.ts';
import { createTopic, uniqueName } from '../../broker-worker/support/kafka.ts';
import { startWorker, type WorkerProcess } from '../../broker-worker/support/worker-process.ts';
import { callTool } from '../../support/event-stack.ts';
import { type GatewayProcess, startGatewayProcess } from '../../support/gateway-process.ts';
import { testKafka } from '../../support/kafka-env.ts';

export const kafka = testKafka();
export const SECRET_1 = 'first-signing-secret-0123456789-abcdef';
export const SECRET_2 = 'second-signing-secret-0123456789-abcdef';

export interface Message {
  offset: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  publisher: string | null;
  published_at: string | null;
  provenance: 'verified' | 'unsigned' | 'invalid';
  provenance_error: string | null;
}

export interface RawRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

type Keys = Record<string, { key: string; id: string }>;

interface Published {
  offset: number;
  publisher: string;
  signing_key_id: string | null;
}

/** A topic two keys of one HMAC-signing gateway (SECRET_1) have each published one record to. */
export interface SignedTopic {
  dataDir: string;
  keys: Keys;
  topic: string;
  gw: GatewayProcess;
  orchestrator: Client;
  worker: Client;
  /** The orchestrator's record: a JSON task with two caller headers and no key. */
  first: Published;
  /** The worker's record: an empty value under an empty key. */
  second: Published;
}

export async function publish(client: Client, args: Record<string, unknown>): Promise<Published> {
  const result = await callTool<Published>(client, 'event_publish', args);
  assert.equal(result.isError, false, result.text);
  return result.data;
}

export async function readAll(client: Client, topic: string, expected: number): Promise<Message[]> {
  const result = await callTool<{ messages: Message[] }>(client, 'event_consume', {
    topic,
    from: 'earliest',
    // Returns as soon as the expected records are in; the tests count them separately where it matters.
    max: expected,
    timeout_ms: 10_000,
  });
  assert.equal(result.isError, false, result.text);
  assert.equal(result.data.messages.length, expected, result.text);
  return result.data.messages;
}

/** Reads a topic's records with kafkajs, as a consumer outside the gateway would. */
export async function rawRecords(topic: string, expected: number): Promise<RawRecord[]> {
  const consumer = new Kafka({ brokers: [kafka.plaintext], logLevel: logLevel.NOTHING }).consumer({
    groupId: uniqueName('raw'),
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: RawRecord[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const headers: Record<string, Buffer> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = value as Buffer;
        seen.push({ key: message.key, value: message.value, headers });
        if (seen.length === expected) resolve();
      },
    });
  });
  await consumer.disconnect();
  return seen;
}

export async function produceRaw(
  topic: string,
  messages: Array<{ key?: string | null; value: string; headers?: Record<string, string | Buffer> }>,
) {
  const producer = new Kafka({ brokers: [kafka.plaintext], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

/**
 * The helpers for one test file. Its gateways share one broker worker, started by the first
 * gateway (node:test may run a file's root `before` hooks together, so a hook here could not
 * be relied on to come first) and stopped after the file's tests, once everything the helpers
 * started is closed.
 */
export function provenanceStack() {
  let worker: Promise<WorkerProcess> | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    if (worker) await (await worker).stop();
  });

  /** A data directory with a key store holding the named keys; a gateway "host". */
  async function host(...labels: string[]): Promise<{ dataDir: string; keys: Keys }> {
    const dataDir = await mkdtemp(join(tmpdir(), 'mcp-provenance-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const store = new ApiKeyStore(keyStorePath(dataDir));
    const keys: Keys = {};
    for (const label of labels) keys[label] = store.create(label, 'provenance-test');
    store.close();
    return { dataDir, keys };
  }

  async function gateway(dataDir: string, env: Record<string, string>): Promise<GatewayProcess> {
    worker ??= startWorker({
      BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
      BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    });
    const { address } = await worker;
    const gw = await startGatewayProcess({ DATA_DIR: dataDir, BROKER_WORKERS: address, ...env });
    cleanups.push(() => gw.stop());
    return gw;
  }

  async function mcp(gw: GatewayProcess, apiKey: string): Promise<Client> {
    const client = new Client({ name: 'provenance-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
        requestInit: { headers: { 'X-API-Key': apiKey } },
      }),
    );
    cleanups.push(() => client.close());
    return client;
  }

  async function signedTopic(): Promise<SignedTopic> {
    const h = await host('orchestrator', 'worker');
    const topic = uniqueName('prov-tasks');
    await createTopic(kafka.plaintext, topic, 2);
    const gw = await gateway(h.dataDir, { EVENT_SIGNING_SECRET: SECRET_1 });
    const orchestrator = await mcp(gw, h.keys.orchestrator!.key);
    const workerClient = await mcp(gw, h.keys.worker!.key);
    const first = await publish(orchestrator, {
      topic,
      value: '{"task":"invoice"}',
      headers: { 'content-type': 'application/json', 'x-attempt': '1' },
    });
    const second = await publish(workerClient, { topic, value: '', key: '' });
    return { ...h, topic, gw, orchestrator, worker: workerClient, first, second };
  }

  // Built once per file: tests that only read signed records need no gateway of their own.
  let shared: SignedTopic | undefined;
  before(async () => {
    shared = await signedTopic();
  });

  return {
    host,
    gateway,
    mcp,
    /** The file's signed topic, built in a before hook. */
    get shared(): SignedTopic {
      if (!shared) throw new Error('the signed topic is built in a before hook; read it inside a test');
      return shared;
    },
  };
}
