import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { loadWorkerSettings } from '../../broker-worker/settings.ts';
import { brokerReadiness, parseBrokerSettings, SettingsError } from '../../shared/broker-settings.ts';
import { groupNameProblem, topicNameProblem } from '../../shared/event/names.ts';
import { groupName, topicName } from '../../shared/event/schemas.ts';
import { runWorkerToExit } from './support/worker-process.ts';

function failsNaming(variable: string, env: Record<string, string>) {
  assert.throws(
    () => loadWorkerSettings(env),
    (e: unknown) =>
      e instanceof SettingsError && e.variable === variable && e.message.startsWith(`${variable}: `),
  );
}

describe('worker settings', () => {
  it('uses the documented defaults', () => {
    const s = loadWorkerSettings({ DATA_DIR: '/srv/data' });
    assert.equal(s.broker.securityProtocol, 'SASL_SSL');
    assert.equal(s.broker.saslMechanism, 'PLAIN');
    assert.equal(s.broker.allowTopicAdmin, false);
    assert.deepEqual(s.listen, { kind: 'unix', path: '/srv/data/broker-worker.sock' });
    assert.equal(s.consumerIdleMs, 300_000);
    assert.equal(s.maxConsumers, 64);
  });

  it('names the variable of a bad value', () => {
    failsNaming('BROKER_SECURITY_PROTOCOL', { BROKER_SECURITY_PROTOCOL: 'TLS' });
    failsNaming('BROKER_SASL_MECHANISM', { BROKER_SASL_MECHANISM: 'GSSAPI' });
    failsNaming('BROKER_BOOTSTRAP_SERVERS', { BROKER_BOOTSTRAP_SERVERS: 'localhost' });
    failsNaming('BROKER_DEFAULT_TOPIC', { BROKER_DEFAULT_TOPIC: 'bad topic!' });
    failsNaming('BROKER_WORKER_LISTEN', { BROKER_WORKER_LISTEN: 'localhost:7070' });
    failsNaming('BROKER_CONSUMER_IDLE_MS', { BROKER_CONSUMER_IDLE_MS: 'soon' });
    failsNaming('BROKER_MAX_CONSUMERS', { BROKER_MAX_CONSUMERS: '0' });
    failsNaming('BROKER_SSL_CA_FILE', { BROKER_SSL_CA_FILE: '/nonexistent/ca.pem' });
    failsNaming('LOG_LEVEL', { LOG_LEVEL: 'loud' });
  });

  it('accepts lenient spellings of enums and enables topic admin only for exactly "true"', () => {
    const s = parseBrokerSettings({
      BROKER_SECURITY_PROTOCOL: 'sasl_plaintext',
      BROKER_SASL_MECHANISM: 'scram_sha_512',
    });
    assert.equal(s.securityProtocol, 'SASL_PLAINTEXT');
    assert.equal(s.saslMechanism, 'SCRAM-SHA-512');
    for (const value of ['TRUE', '1', 'yes', ' true']) {
      assert.equal(parseBrokerSettings({ BROKER_ALLOW_TOPIC_ADMIN: value }).allowTopicAdmin, false, value);
    }
    assert.equal(parseBrokerSettings({ BROKER_ALLOW_TOPIC_ADMIN: 'true' }).allowTopicAdmin, true);
  });

  it('reports what is missing instead of failing', () => {
    assert.deepEqual(brokerReadiness(parseBrokerSettings({})).missingSettings, [
      'BROKER_BOOTSTRAP_SERVERS',
      'BROKER_API_KEY',
      'BROKER_API_SECRET',
    ]);
    const plaintext = brokerReadiness(
      parseBrokerSettings({ BROKER_BOOTSTRAP_SERVERS: 'a:9092', BROKER_SECURITY_PROTOCOL: 'PLAINTEXT' }),
    );
    assert.equal(plaintext.configured, true);
    const noSecret = brokerReadiness(
      parseBrokerSettings({ BROKER_BOOTSTRAP_SERVERS: 'a:9092', BROKER_API_KEY: 'k' }),
    );
    assert.deepEqual(noSecret.missingSettings, ['BROKER_API_SECRET']);
  });

  it('checks topic and group names at start as the tool schemas do, with the same sentences', () => {
    const topics = ['orders', 'a.b_c-1', '', '.', '..', 'bad topic!', 'ü', 'x'.repeat(249), 'x'.repeat(250)];
    for (const name of topics) {
      const parsed = topicName.safeParse(name);
      assert.equal(topicNameProblem(name), parsed.success ? null : parsed.error.issues[0]?.message, name);
    }
    for (const name of ['g', '', 'x'.repeat(255), 'x'.repeat(256)]) {
      const parsed = groupName.safeParse(name);
      assert.equal(groupNameProblem(name), parsed.success ? null : parsed.error.issues[0]?.message, name);
    }
    assert.throws(
      () => parseBrokerSettings({ BROKER_CONSUMER_GROUP: 'x'.repeat(256) }),
      /BROKER_CONSUMER_GROUP: group must be at most 255 characters/,
    );
    assert.equal(loadWorkerSettings({ BROKER_MAX_CONSUMERS: '1e2' }).maxConsumers, 100);
    failsNaming('BROKER_MAX_CONSUMERS', { BROKER_MAX_CONSUMERS: '2.5' });
  });

  it('never serializes the credentials', () => {
    const s = parseBrokerSettings({ BROKER_API_KEY: 'key-123', BROKER_API_SECRET: 'secret-456' });
    const dumped = `${JSON.stringify(s)} ${inspect(s, { depth: 5 })}`;
    assert.doesNotMatch(dumped, /key-123|secret-456/);
    assert.equal(s.credentials?.password, 'secret-456');
  });

  it('stops the process with a message naming the variable', async () => {
    const { code, output } = await runWorkerToExit({ BROKER_SECURITY_PROTOCOL: 'TLS' });
    assert.equal(code, 2);
    assert.match(
      output,
      /BROKER_SECURITY_PROTOCOL: "TLS" is not one of SASL_SSL, SASL_PLAINTEXT, SSL, PLAINTEXT/,
    );
  });
});
