/** The pure parts of the local broker setup: no JVM needed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapePropertyValue, renderServerProperties, validateUsers } from '../../dev/kafka/config.ts';
import { LocalKafkaError } from '../../dev/kafka/errors.ts';
import { parseJavaMajor } from '../../dev/kafka/java.ts';

test('java -version output of old and new JDKs', () => {
  assert.equal(parseJavaMajor('openjdk version "17.0.15" 2025-04-15'), 17);
  assert.equal(parseJavaMajor('java version "1.8.0_402"'), 8);
  assert.equal(parseJavaMajor('openjdk version "21" 2023-09-19'), 21);
  assert.equal(parseJavaMajor('no version here'), undefined);
});

test('property values survive java.util.Properties escaping', () => {
  assert.equal(escapePropertyValue('C:\\data\\kafka'), 'C:\\\\data\\\\kafka');
  assert.equal(escapePropertyValue(' lead'), '\\ lead');
  assert.equal(escapePropertyValue('a\nb'), 'a\\nb');
  assert.equal(escapePropertyValue('/tmp/d\u00e9v'), '/tmp/d\\u00e9v');
});

test('SASL users: names Kafka can parse, passwords quoted for JAAS', () => {
  assert.throws(() => validateUsers({}), LocalKafkaError);
  assert.throws(() => validateUsers({ 'bad name': 'x' }), /not allowed/);
  assert.throws(() => validateUsers({ ok: '' }), /empty password/);
  const properties = renderServerProperties({
    ports: { plaintext: 1, saslPlaintext: 2, saslSsl: null, controller: 3 },
    logDir: '/tmp/logs',
    users: { agent: 'p"w\\d' },
    initialRebalanceDelayMs: 0,
    keystore: null,
  });
  // JAAS escapes to p\"w\\d, and the properties file escapes each backslash once more.
  assert.match(properties, /user_agent="p\\\\"w\\\\\\\\d";/);
  assert.match(properties, /^auto\.create\.topics\.enable=false$/m);
  assert.match(properties, /^controller\.quorum\.voters=1@127\.0\.0\.1:3$/m);
  assert.doesNotMatch(properties, /SASL_SSL:\/\//);
});

test('three nodes: one quorum of all three, and every topic replicated three times with two in sync', () => {
  const properties = renderServerProperties({
    ports: { plaintext: 9102, saslPlaintext: 9104, saslSsl: null, controller: 9103 },
    nodeId: 2,
    voters: [
      { nodeId: 1, controllerPort: 9093 },
      { nodeId: 2, controllerPort: 9103 },
      { nodeId: 3, controllerPort: 9113 },
    ],
    logDir: '/tmp/logs',
    users: { agent: 'x' },
    initialRebalanceDelayMs: 0,
    keystore: null,
  });
  assert.match(properties, /^node\.id=2$/m);
  assert.match(
    properties,
    /^controller\.quorum\.voters=1@127\.0\.0\.1:9093,2@127\.0\.0\.1:9103,3@127\.0\.0\.1:9113$/m,
  );
  for (const line of [
    'default.replication.factor=3',
    'min.insync.replicas=2',
    'offsets.topic.replication.factor=3',
    'transaction.state.log.replication.factor=3',
    'transaction.state.log.min.isr=2',
    'share.coordinator.state.topic.replication.factor=3',
    'share.coordinator.state.topic.min.isr=2',
    'auto.create.topics.enable=false',
  ])
    assert.match(properties, new RegExp(`^${line.replaceAll('.', '\\.')}$`, 'm'));
});
