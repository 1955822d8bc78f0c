/**
 * Publisher provenance end to end, as the gateway stamps and checks it: real gateway
 * processes, a real broker worker, the suite's Kafka, MCP SDK clients; kafkajs writes the
 * forgeries. How a consumer outside the gateway checks a signature is in
 * provenance-outside.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTopic, uniqueName, withAdmin } from '../broker-worker/support/kafka.ts';
import { callTool } from '../support/event-stack.ts';
import {
  kafka,
  type Message,
  produceRaw,
  provenanceStack,
  publish,
  rawRecords,
  readAll,
  SECRET_1,
  SECRET_2,
} from './support/provenance.ts';

// The tests below run in order on stack.shared: each later one counts the records the
// earlier ones wrote, and the restart test stops its gateway, so it comes last.
const stack = provenanceStack();
const { mcp, host, gateway } = stack;

let rotatedPublisher = '';

test('two keys publish; each sees the other as the verified publisher, with caller headers only', async () => {
  // signedTopic published the two records: the orchestrator's task, then the worker's empty reply.
  const { keys, topic, orchestrator, worker: workerClient, first, second } = stack.shared;
  assert.equal(first.publisher, keys.orchestrator!.id);
  assert.match(first.signing_key_id ?? '', /^hs256-/);
  assert.equal(second.publisher, keys.worker!.id);

  for (const reader of [orchestrator, workerClient]) {
    const messages = await readAll(reader, topic, 2);
    const byValue = new Map(messages.map((m) => [m.value, m]));
    const task = byValue.get('{"task":"invoice"}')!;
    assert.equal(task.provenance, 'verified', task.provenance_error ?? '');
    assert.equal(task.publisher, keys.orchestrator!.id);
    assert.equal(task.key, null);
    assert.deepEqual(task.headers, { 'content-type': 'application/json', 'x-attempt': '1' });
    assert.ok(!Number.isNaN(Date.parse(task.published_at!)));
    const reply = byValue.get('')!;
    assert.equal(reply.provenance, 'verified', reply.provenance_error ?? '');
    assert.equal(reply.publisher, keys.worker!.id);
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
    [`verified ${keys.orchestrator!.id}`, `verified ${keys.worker!.id}`].sort(),
  );
  const raw = await rawRecords(topic, 2);
  for (const record of raw) {
    assert.ok(record.headers['mcp-signature'], 'outside consumers see the stamp');
    assert.ok(!String(record.headers['mcp-publisher']).startsWith('mcp_'), 'never the key itself');
  }
});

test('a publish setting a reserved header is refused and writes nothing', async () => {
  const client = await mcp(stack.shared.gw, stack.shared.keys.orchestrator!.key);
  for (const name of ['mcp-publisher', 'MCP-Signature', 'Mcp-anything']) {
    const refused = await callTool(client, 'event_publish', {
      topic: stack.shared.topic,
      value: 'claims to be someone',
      headers: { [name]: stack.shared.keys.worker!.id, ok: '1' },
    });
    assert.equal(refused.isError, true, name);
    assert.match(refused.text, new RegExp(`"${name}".*reserved`));
  }
  const offsets = await withAdmin(kafka.plaintext, (admin) => admin.fetchTopicOffsets(stack.shared.topic));
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
  const client = await mcp(stack.shared.gw, stack.shared.keys.worker!.key);
  const victim = stack.shared.keys.orchestrator!.id;
  // A genuine signed record to copy the stamp from.
  const [genuine] = await rawRecords(stack.shared.topic, 2).then((records) =>
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
      headers: { ...caller, ...stamp, 'mcp-publisher': stack.shared.keys.worker!.id },
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
  const fresh = await publish(reader, { topic: stack.shared.topic, value: 'after rotation' });
  rotatedPublisher = rotatedHost.keys.reader!.id;
  assert.match(fresh.signing_key_id ?? '', /^hs256-/);

  const messages = await readAll(reader, stack.shared.topic, 3);
  const byValue = new Map(messages.map((m) => [m.value, m]));
  assert.equal(byValue.get('{"task":"invoice"}')!.provenance, 'verified');
  assert.equal(byValue.get('{"task":"invoice"}')!.publisher, stack.shared.keys.orchestrator!.id);
  assert.equal(byValue.get('after rotation')!.provenance, 'verified');
  assert.equal(byValue.get('after rotation')!.publisher, rotatedHost.keys.reader!.id);

  const capabilities = await callTool<{
    details: { provenance: { signingKeyId: string; verifyKeys: Array<{ keyId: string }> } };
  }>(reader, 'event_capabilities');
  assert.equal(capabilities.data.details.provenance.signingKeyId, fresh.signing_key_id);
  assert.equal(capabilities.data.details.provenance.verifyKeys.length, 2);
  assert.doesNotMatch(capabilities.text, new RegExp(`${SECRET_1}|${SECRET_2}`));

  // The first host has not been given the new key yet: the new record names a key it does not know.
  const oldHostReader = await mcp(stack.shared.gw, stack.shared.keys.worker!.key);
  const seenByOld = new Map((await readAll(oldHostReader, stack.shared.topic, 3)).map((m) => [m.value, m]));
  assert.equal(seenByOld.get('after rotation')!.provenance, 'invalid');
  assert.match(seenByOld.get('after rotation')!.provenance_error!, /does not know/);

  const retiredHost = await host('late');
  const retired = await gateway(retiredHost.dataDir, { EVENT_SIGNING_SECRET: SECRET_2 });
  const late = await mcp(retired, retiredHost.keys.late!.key);
  const seenRetired = new Map((await readAll(late, stack.shared.topic, 3)).map((m) => [m.value, m]));
  assert.equal(seenRetired.get('{"task":"invoice"}')!.provenance, 'invalid');
  assert.equal(seenRetired.get('after rotation')!.provenance, 'verified');
});

test('a restarted gateway process with the same secret verifies records written before the restart', async () => {
  assert.equal(await stack.shared.gw.stop(), 0);
  const restarted = await gateway(stack.shared.dataDir, {
    EVENT_SIGNING_SECRET: SECRET_1,
    EVENT_VERIFY_SECRETS: SECRET_2,
  });
  const client = await mcp(restarted, stack.shared.keys.worker!.key);
  const messages = await readAll(client, stack.shared.topic, 3);
  assert.deepEqual(
    messages.map((m) => `${m.provenance} ${m.publisher}`).sort(),
    [
      `verified ${stack.shared.keys.orchestrator!.id}`,
      `verified ${stack.shared.keys.worker!.id}`,
      `verified ${rotatedPublisher}`,
    ].sort(),
  );
});
