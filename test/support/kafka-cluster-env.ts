/**
 * How the runner tells test files where the run's three-broker cluster is. A file that
 * imports this module is run after the other files, one at a time, against a cluster the
 * runner starts for them alone (test/run.ts): such files kill and restart brokers, which
 * no other file may see.
 */
import type { LocalKafka } from '../../dev/kafka/local-kafka.ts';

export function testKafkaClusterEnv(kafka: LocalKafka, dataDir: string): Record<string, string> {
  return {
    TEST_KAFKA_CLUSTER_PLAINTEXT: kafka.plaintext,
    TEST_KAFKA_CLUSTER_DATA_DIR: dataDir,
    TEST_KAFKA_CLUSTER_BROKERS: JSON.stringify(kafka.brokers),
  };
}

export interface TestKafkaCluster {
  /** Bootstrap list over every broker. */
  plaintext: string;
  /** The cluster's data dir: `npm run kafka -- start --data-dir` on it restarts a killed broker. */
  dataDir: string;
  /** As started; a test that restarts a broker reads its new pid with localKafkaStatus(dataDir). */
  brokers: Array<{ nodeId: number; plaintext: string; pid: number }>;
}

/** Inside a test file: the run's cluster, or a clear failure when the file was run outside `npm test`. */
export function testKafkaCluster(): TestKafkaCluster {
  const plaintext = process.env.TEST_KAFKA_CLUSTER_PLAINTEXT;
  if (!plaintext)
    throw new Error(
      'TEST_KAFKA_CLUSTER_PLAINTEXT is not set: run tests through `npm test` (test/run.ts), which starts a three-broker cluster for files whose imports reach test/support/kafka-cluster-env.ts',
    );
  return {
    plaintext,
    dataDir: process.env.TEST_KAFKA_CLUSTER_DATA_DIR ?? '',
    brokers: JSON.parse(process.env.TEST_KAFKA_CLUSTER_BROKERS ?? '[]') as TestKafkaCluster['brokers'],
  };
}
