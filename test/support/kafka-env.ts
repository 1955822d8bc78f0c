import type { LocalKafka } from '../../dev/kafka/local-kafka.ts';

/** How the runner tells test files where the run's shared broker is. */
export function testKafkaEnv(kafka: LocalKafka): Record<string, string> {
  return {
    TEST_KAFKA_PLAINTEXT: kafka.plaintext,
    TEST_KAFKA_SASL_PLAINTEXT: kafka.saslPlaintext,
    TEST_KAFKA_SASL_SSL: kafka.saslSsl?.bootstrap ?? '',
    TEST_KAFKA_SASL_SSL_CA: kafka.saslSsl?.caPemPath ?? '',
    TEST_KAFKA_USERS: JSON.stringify(kafka.users),
  };
}

export interface TestKafka {
  plaintext: string;
  saslPlaintext: string;
  saslSsl: string;
  saslSslCaPath: string;
  users: Record<string, string>;
}

/** Inside a test file: the shared broker, or a clear failure when the file was run outside `npm test`. */
export function testKafka(): TestKafka {
  const plaintext = process.env.TEST_KAFKA_PLAINTEXT;
  if (!plaintext && process.env.TEST_KAFKA_NOT_STARTED)
    throw new Error(
      'npm test started no Kafka for this run: it starts one only for test files whose imports reach test/support/kafka-env.ts (test/support/test-needs.ts); import testKafka from there, not through a path the scan cannot follow',
    );
  if (!plaintext)
    throw new Error('TEST_KAFKA_PLAINTEXT is not set: run tests through `npm test` (test/run.ts)');
  return {
    plaintext,
    saslPlaintext: process.env.TEST_KAFKA_SASL_PLAINTEXT ?? '',
    saslSsl: process.env.TEST_KAFKA_SASL_SSL ?? '',
    saslSslCaPath: process.env.TEST_KAFKA_SASL_SSL_CA ?? '',
    users: JSON.parse(process.env.TEST_KAFKA_USERS ?? '{}') as Record<string, string>,
  };
}
