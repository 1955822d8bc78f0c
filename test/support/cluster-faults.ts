/**
 * Faults done to a local Kafka cluster (dev/kafka) by its data dir: kill -9 of a partition's
 * leader, and a rolling restart. Brokers come back on their ports, detached, so whoever
 * stops the cluster by its data dir (the test runner, the chaos script) stops them too.
 */
import { Kafka, logLevel } from 'kafkajs';
import { terminate } from '../../dev/kafka/broker-process.ts';
import { localKafkaStatus, startLocalKafka } from '../../dev/kafka/local-kafka.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the data dir's stopped brokers again on their stored ports, and waits until all serve. */
export async function restartMissing(dataDir: string): Promise<void> {
  await startLocalKafka({
    dataDir,
    saslSslPort: null,
    initialRebalanceDelayMs: 0,
    detached: true,
    shortLived: true,
  });
}

/** The node id leading `partition` of `topic`. */
export async function leaderOf(bootstrap: string, topic: string, partition: number): Promise<number> {
  const admin = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const leader = metadata.topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader;
    if (leader === undefined || leader < 0)
      throw new Error(`partition ${partition} of ${topic} has no leader`);
    return leader;
  } finally {
    await admin.disconnect();
  }
}

/** kill -9 of the broker leading `partition`, down for `downMs`, then started again on its ports. */
export async function killLeader(
  bootstrap: string,
  dataDir: string,
  topic: string,
  partition: number,
  log: (line: string) => void = () => {},
  downMs = 2000,
): Promise<void> {
  const leader = await leaderOf(bootstrap, topic, partition);
  const status = await localKafkaStatus(dataDir);
  const pid = status.nodes.find((n) => n.nodeId === leader)?.state?.pid;
  if (pid === undefined)
    throw new Error(`broker ${leader}, leader of partition ${partition}, is not running`);
  process.kill(pid, 'SIGKILL');
  log(`broker ${leader} (pid ${pid}) killed`);
  await sleep(downMs);
  await restartMissing(dataDir);
  log(`broker ${leader} back`);
}

/** Each broker in turn stopped gracefully (SIGTERM) and started again, the next once it serves. */
export async function rollingRestart(dataDir: string, log: (line: string) => void = () => {}): Promise<void> {
  const { nodes } = await localKafkaStatus(dataDir);
  for (const node of nodes) {
    const pid = node.state?.pid;
    if (pid === undefined) continue;
    await terminate(pid, log);
    log(`broker ${node.nodeId} stopped`);
    await restartMissing(dataDir);
    log(`broker ${node.nodeId} back`);
  }
}
