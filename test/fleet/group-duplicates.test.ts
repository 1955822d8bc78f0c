/**
 * The duplicate deliveries of FLEET.md, on the run's three-broker cluster: one consumer
 * group polled through two gateways, each reaching both workers over TCP, while the worker
 * serving the group is killed -9, then the other worker, then the leader of a partition.
 * Nothing acknowledged may be lost, and at most 5% of the messages may be delivered twice;
 * the report prints the floor (messages the killed worker had handed out, uncommitted, when
 * it died) beside the duplicates.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { localKafkaStatus, startLocalKafka } from '../../dev/kafka/local-kafka.ts';
import { startFleet } from '../support/fleet.ts';
import { runGroupUnderFaults } from '../support/group-under-faults.ts';
import { testKafkaCluster } from '../support/kafka-cluster-env.ts';

const cluster = testKafkaCluster();
const log = (line: string) => console.log(`# [fleet] ${line}`);

/** kill -9 of the broker leading `partition`, and the same broker started again on its ports. */
async function killLeader(topic: string, partition: number): Promise<void> {
  const admin = new Kafka({ brokers: cluster.plaintext.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  let leader: number | undefined;
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    leader = metadata.topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader;
  } finally {
    await admin.disconnect();
  }
  const status = await localKafkaStatus(cluster.dataDir);
  const node = status.nodes.find((n) => n.nodeId === leader);
  assert.ok(node?.state, `the leader of partition ${partition} (node ${leader}) runs`);
  process.kill(node.state.pid, 'SIGKILL');
  log(`broker ${leader} (pid ${node.state.pid}) killed`);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  // Detached: the runner stops the cluster by its data dir, whoever started a broker.
  await startLocalKafka({
    dataDir: cluster.dataDir,
    saslSslPort: null,
    initialRebalanceDelayMs: 0,
    detached: true,
    shortLived: true,
  });
  log(`broker ${leader} back`);
}

test('one group through two gateways under worker and leader kills: none lost, at most 5% twice', {
  timeout: 300_000,
}, async () => {
  const fleet = await startFleet(cluster.plaintext, JSON.parse(process.env.FLEET_WORKER_ENV ?? '{}'));
  try {
    const report = await runGroupUnderFaults({
      fleet,
      bootstrap: cluster.plaintext,
      topic: `fleet-dup-${Date.now()}`,
      group: 'fleet-dup',
      messages: 3000,
      // The leader first: its partition stalls until the controller fences the dead broker,
      // so the consumer meets the outage while messages still wait to be delivered.
      faults: [
        { at: 0.1, fault: { kind: 'leader', partition: 1 } },
        { at: 0.5, fault: { kind: 'worker', which: 'owner' } },
        { at: 0.75, fault: { kind: 'worker', which: 'other' } },
      ],
      max: 20,
      workMs: 0,
      killLeader,
      log,
    });
    log(JSON.stringify(report));
    for (const w of [...fleet.replaced, ...fleet.workers])
      for (const line of w.lines.filter((l) => /"level":[45]0|DEBUGCOMMIT/.test(l)).slice(0, 200))
        log(`DEBUG ${line.slice(0, 300)}`);
    assert.equal(report.lost, 0, 'every acknowledged message was delivered');
    assert.equal(report.delivered, report.acknowledged);
    assert.ok(
      report.duplicated <= report.messages * 0.05,
      `${report.duplicated} of ${report.messages} delivered twice (floor ${report.floor})`,
    );
  } finally {
    await fleet.close();
  }
});
