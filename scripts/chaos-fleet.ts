/**
 * `npm run chaos -- fleet`: the fleet campaign on a three-broker cluster (dev/kafka) with two
 * gateway + worker pairs, each gateway reaching both workers over TCP (test/support/fleet.ts).
 * One row per fault: a partition leader killed -9 under publish load, a rolling restart of
 * the three brokers while a group consumes, and the group's worker killed -9 and restarted;
 * then, on gateway processes behind HAProxy with a Postgres and a Valkey
 * (scripts/chaos-fleet-stores.ts): a gateway, the postmaster and Valkey killed -9.
 * Exits 1 when an acknowledged operation is lost or the fleet did not recover on its own.
 * `npm run chaos -- fleet valkey` runs only the two direct Valkey rows, on one broker.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRIVATE_CLUSTER, startLocalKafka, stopLocalKafka } from '../dev/kafka/local-kafka.ts';
import { killLeader, rollingRestart } from '../test/support/cluster-faults.ts';
import { startFleet } from '../test/support/fleet.ts';
import { runGroupUnderFaults } from '../test/support/group-under-faults.ts';
import { publishUnderFault } from '../test/support/publish-under-faults.ts';
import { groupRow, machine, printRows, type Row } from './chaos-fleet-rows.ts';
import { storeFaultRows } from './chaos-fleet-stores.ts';
import { valkeyRows } from './chaos-fleet-valkey.ts';

const log = (line: string) => console.log(`[chaos fleet ${new Date().toISOString().slice(11, 19)}] ${line}`);

// The workers run the compiled tree, as in production.
if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

const dataDir = await mkdtemp(join(tmpdir(), 'mcp-chaos-fleet-'));
const stopAll = async () => {
  await stopLocalKafka(dataDir);
  await rm(dataDir, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));

const rows: Row[] = [];
const valkeyOnly = process.argv[3] === 'valkey';

/** The Kafka rows: a leader kill, a rolling restart and a worker kill, on in-process gateways. */
async function kafkaRows(bootstrap: string): Promise<void> {
  const fleet = await startFleet(bootstrap);
  try {
    const stamp = Date.now();
    const publish = await publishUnderFault({
      fleet,
      bootstrap,
      topic: `chaos-publish-${stamp}`,
      messages: 1500,
      at: 1 / 3,
      fault: (topic) => killLeader(bootstrap, dataDir, topic, 0, log),
      log,
    });
    rows.push({ fault: 'leader kill -9 under publish', ...publish, note: '8 publishes in flight' });

    const rolling = await runGroupUnderFaults({
      fleet,
      bootstrap,
      topic: `chaos-rolling-${stamp}`,
      group: 'chaos-rolling',
      messages: 3000,
      // Paced, so the group is still consuming while each broker restarts.
      max: 10,
      workMs: 500,
      faults: [
        {
          at: 0.05,
          fault: { kind: 'action', name: 'rolling restart', run: () => rollingRestart(dataDir, log) },
        },
      ],
      log,
    });
    rows.push(groupRow('rolling restart of 3 brokers, group consuming', rolling));

    const worker = await runGroupUnderFaults({
      fleet,
      bootstrap,
      topic: `chaos-worker-${stamp}`,
      group: 'chaos-worker',
      messages: 3000,
      max: 20,
      workMs: 0,
      faults: [{ at: 0.3, fault: { kind: 'worker', which: 'owner' } }],
      log,
    });
    rows.push(groupRow('worker kill -9 + restart (2 s)', worker));
  } finally {
    await fleet.close();
  }
}

log(`start ${machine()}`);
try {
  const kafka = await startLocalKafka({
    ...PRIVATE_CLUSTER,
    dataDir,
    // The Valkey rows alone need a broker only for the workers' link.
    brokers: valkeyOnly ? 1 : 3,
    log,
  });
  if (valkeyOnly) rows.push(...(await valkeyRows(kafka.plaintext, log)));
  else {
    await kafkaRows(kafka.plaintext);
    rows.push(...(await storeFaultRows(kafka.plaintext, log)));
  }
} finally {
  await stopAll();
}

console.log(`end ${machine()}`);
printRows(rows);
const ok = rows.every((r) => (r.lost ?? 0) === 0 && r.recovered);
console.log(ok ? 'chaos fleet: PASS (0 lost, every fault recovered on its own)' : 'chaos fleet: FAIL');
process.exit(ok ? 0 : 1);
