/**
 * Publisher provenance end to end: real gateway processes, a real broker worker, the
 * suite's Kafka, MCP SDK clients; kafkajs writes the forgeries and reads raw records as an
 * outside consumer would.
 */
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { keyStorePath } from '../../gateway/server.ts';
import { PUBLISH_MAX_MESSAGE_BYTES } from '../../shared/event/limits.ts';
import { createTopic, uniqueName, withAdmin } from '../broker-worker/support/kafka.ts';
import { startWorker, type WorkerProcess } from '../broker-worker/support/worker-process.ts';
import { callTool } from '../support/event-stack.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
const SECRET_1 = 'first-signing-secret-0123456789-abcdef';
const SECRET_2 = 'second-signing-secret-0123456789-abcdef';

interface Message {
  offset: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  publisher: string | null;
  published_at: string | null;
  provenance: 'verified' | 'unsigned' | 'invalid';
  provenance_error: string | null;
}

let worker: WorkerProcess;
const cleanups: Array<() => Promise<unknown>> = [];

before(async () => {
  worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await worker.stop();
});

/** A data directory with a key store holding the named keys; a gateway "host". */
async function host(
  ...labels: string[]
): Promise<{ dataDir: string; keys: Record<string, { key: string; id: string }> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-provenance-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const store = new ApiKeyStore(keyStorePath(dataDir));
  const keys: Record<string, { key: string; id: string }> = {};
  for (const label of labels) keys[label] = store.create(label, 'provenance-test');
  store.close();
  return { dataDir, keys };
}

async function gateway(dataDir: string, env: Record<string, string>): Promise<GatewayProcess> {
  const gw = await startGatewayProcess({ DATA_DIR: dataDir, BROKER_WORKERS: worker.address, ...env });
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

async function publish(client: Client, args: Record<string, unknown>) {
  const result = await callTool<{ offset: number; publisher: string; signing_key_id: string | null }>(
    client,
    'event_publish',
    args,
  );
  assert.equal(result.isError, false, result.text);
  return result.data;
}

async function readAll(client: Client, topic: string, expected: number): Promise<Message[]> {
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

interface RawRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

/** Reads a topic's records with kafkajs, as a consumer outside the gateway would. */
async function rawRecords(topic: string, expected: number): Promise<RawRecord[]> {
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

async function produceRaw(
  topic: string,
  messages: Array<{ key?: string | null; value: string; headers?: Record<string, string | Buffer> }>,
) {
  const producer = new Kafka({ brokers: [kafka.plaintext], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

let rotatedPublisher = '';
let shared: {
  dataDir: string;
  keys: Record<string, { key: string; id: string }>;
  topic: string;
  gw: GatewayProcess;
};

test('two keys publish; each sees the other as the verified publisher, with caller headers only', async () => {
  const h = await host('orchestrator', 'worker');
  const topic = uniqueName('prov-tasks');
  await createTopic(kafka.plaintext, topic, 2);
  const gw = await gateway(h.dataDir, { EVENT_SIGNING_SECRET: SECRET_1 });
  shared = { ...h, topic, gw };
  const orchestrator = await mcp(gw, h.keys.orchestrator!.key);
  const workerClient = await mcp(gw, h.keys.worker!.key);

  const first = await publish(orchestrator, {
    topic,
    value: '{"task":"invoice"}',
    headers: { 'content-type': 'application/json', 'x-attempt': '1' },
  });
  assert.equal(first.publisher, h.keys.orchestrator!.id);
  assert.match(first.signing_key_id ?? '', /^hs256-/);
  const second = await publish(workerClient, { topic, value: '', key: '' });
  assert.equal(second.publisher, h.keys.worker!.id);

  for (const reader of [orchestrator, workerClient]) {
    const messages = await readAll(reader, topic, 2);
    const byValue = new Map(messages.map((m) => [m.value, m]));
    const task = byValue.get('{"task":"invoice"}')!;
    assert.equal(task.provenance, 'verified', task.provenance_error ?? '');
    assert.equal(task.publisher, h.keys.orchestrator!.id);
    assert.equal(task.key, null);
    assert.deepEqual(task.headers, { 'content-type': 'application/json', 'x-attempt': '1' });
    assert.ok(!Number.isNaN(Date.parse(task.published_at!)));
    const reply = byValue.get('')!;
    assert.equal(reply.provenance, 'verified', reply.provenance_error ?? '');
    assert.equal(reply.publisher, h.keys.worker!.id);
    assert.equal(reply.key, '', 'an empty key stays empty, not null');
    assert.deepEqual(reply.headers, {});
  }
  // Through a consumer group too: every way of reading labels the messages the same.
  const group = uniqueName('prov-group');
  const grouped: Message[] = [];
  for (let round = 0; round < 5 && grouped.length < 2; round++) {
    const polled = await callTool<{ messages: Message[] }>(workerClient, 'event_consume', {
      topic,
      group,
      max: 2,
      timeout_ms: 10_000,
    });
    assert.equal(polled.isError, false, polled.text);
    grouped.push(...polled.data.messages);
  }
  assert.deepEqual(
    grouped.map((m) => `${m.provenance} ${m.publisher}`).sort(),
    [`verified ${h.keys.orchestrator!.id}`, `verified ${h.keys.worker!.id}`].sort(),
  );
  const raw = await rawRecords(topic, 2);
  for (const record of raw) {
    assert.ok(record.headers['mcp-signature'], 'outside consumers see the stamp');
    assert.ok(!String(record.headers['mcp-publisher']).startsWith('mcp_'), 'never the key itself');
  }
});

test('a publish setting a reserved header is refused and writes nothing', async () => {
  const client = await mcp(shared.gw, shared.keys.orchestrator!.key);
  for (const name of ['mcp-publisher', 'MCP-Signature', 'Mcp-anything']) {
    const refused = await callTool(client, 'event_publish', {
      topic: shared.topic,
      value: 'claims to be someone',
      headers: { [name]: shared.keys.worker!.id, ok: '1' },
    });
    assert.equal(refused.isError, true, name);
    assert.match(refused.text, new RegExp(`"${name}".*reserved`));
  }
  const offsets = await withAdmin(kafka.plaintext, (admin) => admin.fetchTopicOffsets(shared.topic));
  assert.equal(
    offsets.reduce((sum, p) => sum + Number(p.high), 0),
    2,
  );
});

test('records forged with kafkajs come back unsigned or invalid, never verified', async () => {
  const topic = uniqueName('prov-forged');
  const elsewhere = uniqueName('prov-elsewhere');
  await createTopic(kafka.plaintext, topic, 1);
  await createTopic(kafka.plaintext, elsewhere, 1);
  const client = await mcp(shared.gw, shared.keys.worker!.key);
  const victim = shared.keys.orchestrator!.id;
  // A genuine signed record to copy the stamp from.
  const [genuine] = await rawRecords(shared.topic, 2).then((records) =>
    records.filter((r) => r.value?.toString() === '{"task":"invoice"}'),
  );
  const stamp = Object.fromEntries(
    Object.entries(genuine!.headers).filter(([name]) => name.startsWith('mcp-')),
  ) as Record<string, Buffer>;
  const caller = { 'content-type': 'application/json', 'x-attempt': '1' };

  await produceRaw(topic, [
    { value: 'plain record from another producer' },
    {
      value: 'claims an identity',
      headers: { 'mcp-publisher': victim, 'mcp-published-at': new Date().toISOString() },
    },
    { value: '{"task":"wire money"}', headers: { ...caller, ...stamp } },
    { key: 'k', value: '{"task":"invoice"}', headers: { ...caller, ...stamp } },
    { value: '{"task":"invoice"}', headers: { ...caller, 'x-attempt': '2', ...stamp } },
    {
      value: '{"task":"invoice"}',
      headers: { ...caller, ...stamp, 'mcp-publisher': shared.keys.worker!.id },
    },
    { value: '{"task":"invoice"}', headers: { ...caller, ...stamp, 'mcp-key-id': 'hs256-madeupkeyid' } },
    { value: '{"task":"invoice"}', headers: { ...caller, ...stamp, 'mcp-signature': 'v1.AAAA' } },
    { value: '{"task":"invoice"}', headers: { ...caller, ...stamp, 'mcp-signature': 'v2.xyz' } },
  ]);
  // The exact stamped record replayed into another topic: the topic is signed too.
  await produceRaw(elsewhere, [{ value: '{"task":"invoice"}', headers: { ...caller, ...stamp } }]);

  const messages = await readAll(client, topic, 9);
  const expected: Array<[Message['provenance'], RegExp | null]> = [
    ['unsigned', null],
    ['unsigned', null],
    ['invalid', /changed after signing/],
    ['invalid', /changed after signing/],
    ['invalid', /changed after signing/],
    ['invalid', /changed after signing/],
    ['invalid', /does not know/],
    ['invalid', /changed after signing/],
    ['invalid', /format/],
  ];
  messages.forEach((message, i) => {
    const [provenance, reason] = expected[i]!;
    assert.equal(message.provenance, provenance, `record ${i}: ${message.value}`);
    assert.equal(message.publisher, null, `record ${i} names no publisher`);
    if (reason) assert.match(message.provenance_error ?? '', reason);
    for (const name of Object.keys(message.headers))
      assert.ok(!name.startsWith('mcp-'), `record ${i}: ${name}`);
  });
  const [replayed] = await readAll(client, elsewhere, 1);
  assert.equal(replayed!.provenance, 'invalid');
  assert.equal(replayed!.publisher, null);
});

test('rotation: old records verify by key id on another host; retiring the old key makes them invalid', async () => {
  const rotatedHost = await host('reader');
  const rotated = await gateway(rotatedHost.dataDir, {
    EVENT_SIGNING_SECRET: SECRET_2,
    EVENT_VERIFY_SECRETS: SECRET_1,
  });
  const reader = await mcp(rotated, rotatedHost.keys.reader!.key);
  const fresh = await publish(reader, { topic: shared.topic, value: 'after rotation' });
  rotatedPublisher = rotatedHost.keys.reader!.id;
  assert.match(fresh.signing_key_id ?? '', /^hs256-/);

  const messages = await readAll(reader, shared.topic, 3);
  const byValue = new Map(messages.map((m) => [m.value, m]));
  assert.equal(byValue.get('{"task":"invoice"}')!.provenance, 'verified');
  assert.equal(byValue.get('{"task":"invoice"}')!.publisher, shared.keys.orchestrator!.id);
  assert.equal(byValue.get('after rotation')!.provenance, 'verified');
  assert.equal(byValue.get('after rotation')!.publisher, rotatedHost.keys.reader!.id);

  const capabilities = await callTool<{
    details: { provenance: { signingKeyId: string; verifyKeys: Array<{ keyId: string }> } };
  }>(reader, 'event_capabilities');
  assert.equal(capabilities.data.details.provenance.signingKeyId, fresh.signing_key_id);
  assert.equal(capabilities.data.details.provenance.verifyKeys.length, 2);
  assert.doesNotMatch(capabilities.text, new RegExp(`${SECRET_1}|${SECRET_2}`));

  // The first host has not been given the new key yet: the new record names a key it does not know.
  const oldHostReader = await mcp(shared.gw, shared.keys.worker!.key);
  const seenByOld = new Map((await readAll(oldHostReader, shared.topic, 3)).map((m) => [m.value, m]));
  assert.equal(seenByOld.get('after rotation')!.provenance, 'invalid');
  assert.match(seenByOld.get('after rotation')!.provenance_error!, /does not know/);

  const retiredHost = await host('late');
  const retired = await gateway(retiredHost.dataDir, { EVENT_SIGNING_SECRET: SECRET_2 });
  const late = await mcp(retired, retiredHost.keys.late!.key);
  const seenRetired = new Map((await readAll(late, shared.topic, 3)).map((m) => [m.value, m]));
  assert.equal(seenRetired.get('{"task":"invoice"}')!.provenance, 'invalid');
  assert.equal(seenRetired.get('after rotation')!.provenance, 'verified');
});

test('a restarted gateway process with the same secret verifies records written before the restart', async () => {
  assert.equal(await shared.gw.stop(), 0);
  const restarted = await gateway(shared.dataDir, {
    EVENT_SIGNING_SECRET: SECRET_1,
    EVENT_VERIFY_SECRETS: SECRET_2,
  });
  const client = await mcp(restarted, shared.keys.worker!.key);
  const messages = await readAll(client, shared.topic, 3);
  assert.deepEqual(
    messages.map((m) => `${m.provenance} ${m.publisher}`).sort(),
    [
      `verified ${shared.keys.orchestrator!.id}`,
      `verified ${shared.keys.worker!.id}`,
      `verified ${rotatedPublisher}`,
    ].sort(),
  );
});

/**
 * The recipe in docs/event.md for a consumer outside the gateway, written here from its
 * description rather than imported, so a change to the encoding that the doc does not
 * follow fails this test.
 */
function outsideCanonicalBytes(topic: string, record: RawRecord): Buffer {
  const field = (bytes: Buffer | null) => {
    if (bytes === null) return Buffer.from([0]);
    const head = Buffer.alloc(5);
    head[0] = 1;
    head.writeUInt32BE(bytes.length, 1);
    return Buffer.concat([head, bytes]);
  };
  const h = record.headers;
  const callerHeaders = Object.entries(h)
    .filter(([name]) => !name.toLowerCase().startsWith('mcp-'))
    .map(([name, value]) => [Buffer.from(name), Buffer.from(value)] as const)
    .sort((a, b) => Buffer.compare(a[0], b[0]));
  const count = Buffer.alloc(4);
  count.writeUInt32BE(callerHeaders.length);
  return Buffer.concat([
    field(Buffer.from('mcp-event-provenance/v1')),
    field(h['mcp-key-id']!),
    field(h['mcp-publisher']!),
    field(h['mcp-published-at']!),
    field(Buffer.from(topic)),
    field(record.key),
    field(record.value),
    count,
    ...callerHeaders.flatMap(([name, value]) => [field(name), field(value)]),
  ]);
}

test('Ed25519: an outside consumer verifies with the public key from event_capabilities', async () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = String(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const h = await host('signer');
  const topic = uniqueName('prov-ed25519');
  await createTopic(kafka.plaintext, topic, 1);
  // The one-line form an .env file holds: newlines written as \n.
  const gw = await gateway(h.dataDir, { EVENT_SIGNING_PRIVATE_KEY: pem.replace(/\n/g, '\\n') });
  const client = await mcp(gw, h.keys.signer!.key);
  const written = await publish(client, {
    topic,
    key: 'order-7',
    value: 'ship it',
    headers: { b: '2', a: '1' },
  });
  assert.match(written.signing_key_id ?? '', /^ed25519-/);
  // A message at the size limit still fits once the stamp is added.
  const largest = 'L'.repeat(PUBLISH_MAX_MESSAGE_BYTES - 1);
  await publish(client, { topic, key: 'k', value: largest });
  const [message, large] = await readAll(client, topic, 2);
  assert.equal(large!.value, largest);
  assert.equal(large!.provenance, 'verified', large!.provenance_error ?? '');
  assert.equal(message!.provenance, 'verified', message!.provenance_error ?? '');
  assert.equal(message!.publisher, h.keys.signer!.id);

  const capabilities = await callTool<{
    details: {
      provenance: { signing: string; verifyKeys: Array<{ keyId: string; publicKey: string | null }> };
    };
  }>(client, 'event_capabilities');
  assert.equal(capabilities.data.details.provenance.signing, 'ed25519');
  const published = capabilities.data.details.provenance.verifyKeys.find(
    (k) => k.keyId === written.signing_key_id,
  )!;
  assert.match(published.publicKey!, /BEGIN PUBLIC KEY/);
  assert.doesNotMatch(capabilities.text, /PRIVATE KEY/);

  const [raw] = await rawRecords(topic, 1);
  const signature = String(raw!.headers['mcp-signature']);
  assert.match(signature, /^v1\./);
  const signed = outsideCanonicalBytes(topic, raw!);
  const bytes = Buffer.from(signature.slice(3), 'base64url');
  assert.equal(verifySignature(null, signed, published.publicKey!, bytes), true);
  const changed = { ...raw!, value: Buffer.from('ship it twice') };
  assert.equal(
    verifySignature(null, outsideCanonicalBytes(topic, changed), published.publicKey!, bytes),
    false,
  );
});

test('HMAC: an outside consumer holding the secret recomputes the signature', async () => {
  const [raw] = (await rawRecords(shared.topic, 3)).filter(
    (r) => r.value?.toString() === '{"task":"invoice"}',
  );
  const expected = createHmac('sha256', SECRET_1)
    .update(outsideCanonicalBytes(shared.topic, raw!))
    .digest('base64url');
  assert.equal(String(raw!.headers['mcp-signature']), `v1.${expected}`);
});

test('without a signing key records are stamped but unsigned, and capabilities say so', async () => {
  const h = await host('plain');
  const topic = uniqueName('prov-unsigned');
  await createTopic(kafka.plaintext, topic, 1);
  const gw = await gateway(h.dataDir, {});
  const client = await mcp(gw, h.keys.plain!.key);
  const written = await publish(client, { topic, value: 'hello' });
  assert.equal(written.signing_key_id, null);
  assert.equal(written.publisher, h.keys.plain!.id);
  const [message] = await readAll(client, topic, 1);
  assert.equal(message!.provenance, 'unsigned');
  assert.equal(message!.publisher, null);
  const [raw] = await rawRecords(topic, 1);
  assert.equal(String(raw!.headers['mcp-publisher']), h.keys.plain!.id);
  const capabilities = await callTool<{ details: { provenance: { signing: string; note: string } } }>(
    client,
    'event_capabilities',
  );
  assert.equal(capabilities.data.details.provenance.signing, 'off');
  assert.match(capabilities.data.details.provenance.note, /EVENT_SIGNING_SECRET/);
  // Signed records from elsewhere name a key this gateway does not have.
  const [signed] = await readAll(client, shared.topic, 3).then((all) =>
    all.filter((m) => m.value === '{"task":"invoice"}'),
  );
  assert.equal(signed!.provenance, 'invalid');
});
