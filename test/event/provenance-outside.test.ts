/**
 * Publisher provenance as a consumer outside the gateway checks it: kafkajs reads the raw
 * records and the signature is checked with node:crypto alone, against an Ed25519 public key
 * from event_capabilities or a recomputed HMAC; and what a gateway without a signing key
 * writes and reports. Real gateway processes, a real broker worker, the suite's Kafka.
 */
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import { test } from 'node:test';
import { PUBLISH_MAX_MESSAGE_BYTES } from '../../shared/event/limits.ts';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { callTool } from '../support/event-stack.ts';
import {
  kafka,
  provenanceStack,
  publish,
  type RawRecord,
  rawRecords,
  readAll,
  SECRET_1,
} from './support/provenance.ts';

// stack.shared: two records signed with SECRET_1 by another host, for the HMAC and unsigned-mode tests.
const stack = provenanceStack();
const { host, gateway, mcp } = stack;

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
  const [raw] = (await rawRecords(stack.shared.topic, 2)).filter(
    (r) => r.value?.toString() === '{"task":"invoice"}',
  );
  const expected = createHmac('sha256', SECRET_1)
    .update(outsideCanonicalBytes(stack.shared.topic, raw!))
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
  const [signed] = await readAll(client, stack.shared.topic, 2).then((all) =>
    all.filter((m) => m.value === '{"task":"invoice"}'),
  );
  assert.equal(signed!.provenance, 'invalid');
});
