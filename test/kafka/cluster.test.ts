/**
 * The three-broker cluster `npm run kafka -- start --brokers 3` runs, here the one the test
 * runner starts for this file (test/support/kafka-cluster-env.ts): every broker is in the
 * cluster, `status` names each, and a broker killed with -9 comes back alone, on the same
 * ports, from `start`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { localKafkaStatus } from '../../dev/kafka/local-kafka.ts';
import { runCli } from '../support/cli.ts';
import { testKafkaCluster } from '../support/kafka-cluster-env.ts';

const cluster = testKafkaCluster();
const env = { LOCAL_KAFKA_BROKERS: '', LOCAL_KAFKA_DATA_DIR: '' };

async function brokersSeen(): Promise<number[]> {
  const admin = new Kafka({ brokers: cluster.plaintext.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort();
  } finally {
    await admin.disconnect();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('three brokers in one cluster; status prints the bootstrap list and each broker', async () => {
  assert.deepEqual(await brokersSeen(), [1, 2, 3]);
  const status = await runCli('kafka', ['status', `--data-dir=${cluster.dataDir}`], { env });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`PLAINTEXT +${cluster.plaintext.replaceAll('.', '\\.')}\\n`));
  // Pids as the data dir has them now: another file of this pass may have restarted a broker.
  const current = await localKafkaStatus(cluster.dataDir);
  assert.equal(current.nodes.length, 3);
  for (const node of current.nodes) {
    const address = `127.0.0.1:${node.ports?.plaintext}`;
    assert.ok(cluster.plaintext.split(',').includes(address), `${address} is in the bootstrap list`);
    assert.match(
      status.stdout,
      new RegExp(`broker ${node.nodeId} +${address.replaceAll('.', '\\.')} +pid ${node.state?.pid} `),
    );
  }
});

test('kill -9 of one broker: start restarts only it, on the same ports, and the cluster has three again', {
  timeout: 120_000,
}, async () => {
  const before = await localKafkaStatus(cluster.dataDir);
  assert.ok(before.running);
  const victim = before.nodes[1]!;
  const victimPid = victim.state!.pid;
  const others = before.nodes.filter((n) => n !== victim).map((n) => n.state!.pid);
  process.kill(victimPid, 'SIGKILL');
  while (alive(victimPid)) await new Promise((resolve) => setTimeout(resolve, 50));

  const down = await runCli('kafka', ['status', `--data-dir=${cluster.dataDir}`], { env });
  assert.match(down.stdout, /broker 2 +\S+ +DOWN/);

  // No --brokers and port 0: the data dir says how many nodes, and which ports.
  const started = await runCli('kafka', ['start', `--data-dir=${cluster.dataDir}`, '--plaintext-port=0'], {
    env,
  });
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, /broker 2 of 3 down: starting only it/);

  const after = await localKafkaStatus(cluster.dataDir);
  assert.ok(after.running);
  assert.deepEqual(
    after.nodes.map((n) => n.ports),
    before.nodes.map((n) => n.ports),
    'every broker serves on the ports it had',
  );
  assert.deepEqual(
    after.nodes.filter((n) => n.nodeId !== 2).map((n) => n.state!.pid),
    others,
    'the running brokers were left alone',
  );
  assert.notEqual(after.nodes[1]!.state!.pid, victimPid);
  assert.equal(after.plaintext, cluster.plaintext);
  assert.deepEqual(await brokersSeen(), [1, 2, 3]);
});
