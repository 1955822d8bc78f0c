/**
 * The duplicate deliveries of FLEET.md, on the run's three-broker cluster: one consumer
 * group polled through two gateways, each reaching both workers over TCP, while the leader
 * of a partition, the worker serving the group and the other worker are each killed -9.
 * Nothing acknowledged may be lost, and at most 5% of the messages may be delivered twice.
 * The report prints the floor (messages under the killed worker's open leases when it
 * died) beside the duplicates. Without the uncommitted window (BROKER_CONSUME_UNCOMMITTED_MAX
 * at 1,000,000) this run delivered 1,720 of 3,000 twice: the leader kill stalled commits
 * while polls kept handing messages out, and the consumer's restart redelivered them all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { killLeader } from '../support/cluster-faults.ts';
import { startFleet } from '../support/fleet.ts';
import { runGroupUnderFaults } from '../support/group-under-faults.ts';
import { testKafkaCluster } from '../support/kafka-cluster-env.ts';

const cluster = testKafkaCluster();
const log = (line: string) => console.log(`# [fleet] ${line}`);

test('one group through two gateways under worker and leader kills: none lost, at most 5% twice', {
  timeout: 300_000,
}, async () => {
  const fleet = await startFleet(cluster.plaintext);
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
        {
          at: 0.1,
          fault: {
            kind: 'action',
            name: 'kill -9 leader of partition 1',
            run: (topic) => killLeader(cluster.plaintext, cluster.dataDir, topic, 1, log),
          },
        },
        { at: 0.5, fault: { kind: 'worker', which: 'owner' } },
        { at: 0.75, fault: { kind: 'worker', which: 'other' } },
      ],
      max: 20,
      workMs: 0,
      log,
    });
    log(JSON.stringify(report));
    assert.equal(report.lost, 0, 'every acknowledged message was delivered');
    assert.equal(report.faults.length, 3, 'every fault struck before the topic was drained');
    assert.equal(report.delivered, report.acknowledged);
    assert.ok(
      report.duplicated <= report.messages * 0.05,
      `${report.duplicated} of ${report.messages} delivered twice (floor ${report.floor})`,
    );
  } finally {
    await fleet.close();
  }
});
