/**
 * The rows of `npm run chaos -- fleet` beyond Kafka, on the fleet of docs/deployment.md#fleet
 * (test/support/pairs.ts): two hosts, each a gateway process and a worker, one native
 * Postgres of the campaign's own (it is killed), one Valkey, the campaign's three-broker
 * cluster, and Debian's HAProxy in front. Faults: kill -9 of a gateway behind HAProxy, kill -9
 * of the postmaster while memories are written through both gateways, and Valkey killed -9
 * while limits are enforced through both (RATE_LIMIT_ON_STORE_ERROR=allow, then deny on a
 * second pair of gateways and workers), and Valkey killed -9 under `allow` again with the
 * calls going through HAProxy (those three in scripts/chaos-fleet-valkey.ts). Each is driven
 * by the module its test uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../broker-worker/kafka/create-topics.ts';
import { gatewayKillUnderLb, KILL_PHASES } from '../test/support/gateway-kill-under-lb.ts';
import { findHaproxy, startHaproxy } from '../test/support/haproxy.ts';
import { freePort, waitFor } from '../test/support/harness.ts';
import { memoryWritesUnderOutage } from '../test/support/memory-under-outage.ts';
import { startOwnPostgres } from '../test/support/own-postgres.ts';
import { mcpClient, type Pairs, startPairs } from '../test/support/pairs.ts';
import { topicValues } from '../test/support/publish-under-faults.ts';
import { mint, type Row, seconds, skipped } from './chaos-fleet-rows.ts';
import { redisRow, redisThroughLbRow, STORE_ROWS_GATEWAY_ENV } from './chaos-fleet-valkey.ts';

type Log = (line: string) => void;

async function gatewayKillRow(fleet: Pairs, bootstrap: string, log: Log): Promise<Row> {
  const fault = 'kill -9 of a gateway behind HAProxy, 4 callers publishing through it; restarted';
  const found = await findHaproxy();
  if (found.skip) return { ...skipped(fault), note: `not run: ${found.skip}` };
  const dir = await mkdtemp(join(tmpdir(), 'mcp-chaos-lb-'));
  const lb = await startHaproxy(found as { path: string; env: Record<string, string> }, {
    dir,
    port: await freePort(),
    backends: fleet.hosts.map((host) => ({ address: host.address, opsPort: host.opsPort })),
  });
  const callers: Awaited<ReturnType<typeof mcpClient>>[] = [];
  try {
    await waitFor(async () => Object.values(await lb.stats()).every((s) => s.status === 'UP'), {
      what: 'HAProxy to mark both gateways UP',
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const key = await mint(fleet, 'chaos-gateway-kill', '--namespaces', 'event');
    const topic = `chaos-gateway-${Date.now()}`;
    const admin = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 3 }]);
    await admin.disconnect();
    for (let i = 0; i < 4; i++) callers.push(await mcpClient(lb.url, 'event', key));
    const report = await gatewayKillUnderLb({ fleet, lb, callers, topic });
    const inTopic = await topicValues(bootstrap, topic);
    const since = (a: string, b: string) => report.marks[b]! - report.marks[a]!;
    const unanswered = KILL_PHASES.reduce((sum, p) => sum + report.tally[p].unanswered, 0);
    const refused = KILL_PHASES.reduce((sum, p) => sum + report.tally[p].toolErrors, 0);
    log(`gateway kill: ${JSON.stringify(report.tally)}`);
    return {
      fault,
      acknowledged: report.acknowledged.length,
      lost: report.acknowledged.filter((value) => !inTopic.has(value)).length,
      duplicated: [...inTopic.values()].reduce((sum, n) => sum + n - 1, 0),
      unanswered,
      longestPauseMs: report.longestPauseMs,
      recovered: report.bounded && report.failedLate.length === 0 && refused === 0,
      note:
        `marked DOWN ${seconds(since('kill', 'down'))} after the kill, ${report.failedLate.length} failed after; ` +
        `back UP ${seconds(since('restart', 'up'))} after the restart`,
    };
  } finally {
    await Promise.all(callers.map((c) => c.close().catch(() => {})));
    await lb.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function postgresRow(
  fleet: Pairs,
  postgres: Awaited<ReturnType<typeof startOwnPostgres>>,
  log: Log,
): Promise<Row> {
  const key = await mint(fleet, 'chaos-postgres', '--namespaces', 'memory');
  const report = await memoryWritesUnderOutage({
    urls: fleet.hosts.map((host) => host.url),
    key,
    databaseUrl: postgres.url,
    kill: () => postgres.kill(),
    restart: () => postgres.restart(),
    downMs: 5000,
    log,
  });
  const down = report.answers.filter((a) => a.phase === 'down');
  const http500 = report.answers.filter((a) => a.status === 500).length;
  const unanswered = report.answers.filter((a) => a.status === 0).length;
  const odd = report.answers.filter(
    (a) => a.status !== 200 && a.status !== 503 && a.status !== 0 && a.status !== 500,
  ).length;
  const otherCodes = report.answers.filter((a) => a.code && a.code !== 'STORE_UNAVAILABLE').length;
  return {
    fault:
      'kill -9 of the Postgres postmaster, memories written through both gateways (4 writers); restarted after 5 s',
    acknowledged: report.acknowledged.length,
    lost: report.lost.length,
    duplicated: null,
    unanswered,
    longestPauseMs: report.longestPauseMs,
    recovered: http500 === 0 && unanswered === 0 && odd === 0 && otherCodes === 0 && report.lost.length === 0,
    note:
      `while down: ${down.filter((a) => a.status === 503).length} x JSON 503, ` +
      `${down.filter((a) => a.code === 'STORE_UNAVAILABLE').length} x STORE_UNAVAILABLE, ${http500} x HTTP 500, ` +
      `${odd + otherCodes} other; writes accepted through both gateways again ${seconds(report.acceptedAgainAfterMs)} ` +
      `after the server was back; slowest call ${seconds(report.slowestMs)}`,
  };
}

/** The gateway, Postgres and Valkey rows, on a fleet started for them and stopped after. */
export async function storeFaultRows(bootstrap: string, log: Log): Promise<Row[]> {
  const postgres = await startOwnPostgres();
  const fleets: Pairs[] = [];
  try {
    const gatewayEnv = STORE_ROWS_GATEWAY_ENV;
    const fleet = await startPairs({ bootstrap, postgresUrl: postgres.url, gatewayEnv });
    fleets.push(fleet);
    const rows = [await gatewayKillRow(fleet, bootstrap, log)];
    rows.push(await postgresRow(fleet, postgres, log));
    rows.push(await redisRow(fleet, 'allow', log));
    rows.push(await redisThroughLbRow(fleet, log));
    // deny on two more pairs, on the same Postgres; with workers, so /readyz fails for Valkey alone.
    const denying = await startPairs({
      bootstrap,
      postgresUrl: postgres.url,
      gatewayEnv: { ...gatewayEnv, RATE_LIMIT_ON_STORE_ERROR: 'deny' },
    });
    fleets.push(denying);
    rows.push(await redisRow(denying, 'deny', log));
    return rows;
  } finally {
    for (const fleet of fleets) await fleet.close();
    await postgres.close();
  }
}
