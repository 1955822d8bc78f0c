/**
 * The Valkey rows of `npm run chaos -- fleet` (scripts/chaos-fleet-stores.ts runs them after
 * the gateway and Postgres rows; `npm run chaos -- fleet valkey` runs them alone): Valkey
 * killed -9 while rate-limited calls go through both gateways of a fleet
 * (test/support/pairs.ts), under RATE_LIMIT_ON_STORE_ERROR=allow and deny, and under allow
 * through HAProxy. Driven by test/support/limits-under-redis-kill.ts, as its tests are.
 *
 * A call counts as "while down" only when no Valkey ran for all of it (answered before the
 * restart began); calls answered once the restart had begun are counted apart, since a
 * gateway may reach the new, empty server (a full bucket) before the harness sees it answer.
 * Each fleet runs with its workers, so a gateway's /readyz fails only for what is away.
 */
import { findHaproxy } from '../test/support/haproxy.ts';
import { waitFor } from '../test/support/harness.ts';
import { balance, notUp, watchServers } from '../test/support/lb-watch.ts';
import {
  everyPhase,
  type LimitsOutageReport,
  limitsUnderRedisKill,
  sumTally,
} from '../test/support/limits-under-redis-kill.ts';
import { startOwnPostgres } from '../test/support/own-postgres.ts';
import { type Pairs, startPairs } from '../test/support/pairs.ts';
import { mint, type Row, seconds, skipped } from './chaos-fleet-rows.ts';

type Log = (line: string) => void;

/** The gateways of the store rows: key verdicts expire within an outage, so calls look keys up on the store. */
export const STORE_ROWS_GATEWAY_ENV = { API_KEY_CACHE_TTL_MS: '200', MEMORY_EMBEDDINGS: 'none' };

interface Readiness {
  status: number;
  /** The checks that failed, `redis (advisory)` when its failure does not gate readiness. */
  failing: string[];
}

/** GET /readyz on a gateway's ops listener, with the checks it names as failing. */
async function readiness(fleet: Pairs, index: number): Promise<Readiness> {
  try {
    const response = await fetch(`http://127.0.0.1:${fleet.hosts[index]!.opsPort}/readyz`);
    const report = (await response.json()) as { checks?: Record<string, { ok: boolean; advisory?: true }> };
    const failing = Object.entries(report.checks ?? {})
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => (check.advisory ? `${name} (advisory)` : name));
    return { status: response.status, failing };
  } catch {
    return { status: 0, failing: ['no answer'] };
  }
}

const allReadiness = (fleet: Pairs) => Promise.all(fleet.hosts.map((_, index) => readiness(fleet, index)));
const shown = (seen: Readiness[]) =>
  seen.map((r) => `${r.status}${r.failing.length ? ` (failing: ${r.failing.join(', ')})` : ''}`).join(' / ');

/** What each phase's calls got, for the note. */
function phaseNotes(report: LimitsOutageReport, onStoreError: 'allow' | 'deny'): string {
  const down = sumTally(report.tally.down);
  const restarting = sumTally(report.tally.restarting);
  // deny admits only what a Valkey granted, so these are the new, empty server's (a full bucket).
  const whose =
    onStoreError === 'deny' ? 'by the new, empty server' : "by the new server or each gateway's own limit";
  return (
    `while down (answered before Valkey's restart began): ${down.admitted} admitted, ${down.limited} x 429, ` +
    `${down.storeRefused} x 503; answered once the restart had begun, before the new Valkey answered the ` +
    `campaign ${report.restartTookMs} ms later: ${restarting.admitted} admitted (${whose}), ` +
    `${restarting.limited} x 429, ${restarting.storeRefused} x 503`
  );
}

export async function redisRow(fleet: Pairs, onStoreError: 'allow' | 'deny', log: Log): Promise<Row> {
  let checks = 0;
  const readyBefore = await allReadiness(fleet);
  // What a load balancer checking /readyz sees of each gateway while Valkey is away.
  let readyWhileDown: Readiness[] = [];
  const keyFor = (label: string, rate: string, burst: number) =>
    mint(fleet, label, '--namespaces', 'memory', '--rate', rate, '--burst', String(burst));
  const report = await limitsUnderRedisKill({
    urls: fleet.hosts.map((host) => host.url),
    key: await keyFor(`chaos-redis-${onStoreError}`, '10/s', 10),
    namespace: 'memory',
    kill: () => fleet.valkey.kill(),
    restart: () => fleet.restartValkey(),
    mint: (burst) => keyFor(`chaos-redis-check-${++checks}`, '1/min', burst),
    callersPerGateway: 2,
    downMs: 5000,
    whileDown: async () => {
      // The readiness check gives Redis 1.5 s to answer; every gateway names it failing within a few.
      readyWhileDown = await waitFor(
        async () => {
          const seen = await allReadiness(fleet);
          return seen.every((r) => r.failing.some((name) => name.startsWith('redis'))) ? seen : undefined;
        },
        { what: "every gateway's /readyz to name Redis failing", timeoutMs: 4000, intervalMs: 200 },
      ).catch(() => allReadiness(fleet));
    },
    log,
  });
  const readyAfter = await allReadiness(fleet);
  const all = sumTally(everyPhase(report.tally));
  const down = sumTally(report.tally.down);
  // The setting's promise while no Valkey runs: deny admits nothing, allow refuses nothing for the store.
  const held =
    onStoreError === 'deny' ? down.admitted === 0 && down.storeRefused > 0 : down.storeRefused === 0;
  return {
    fault: `Valkey kill -9 under rate-limited calls through both gateways (10/s key, 4 callers), RATE_LIMIT_ON_STORE_ERROR=${onStoreError}; restarted after 5 s`,
    acknowledged: all.admitted,
    lost: null,
    duplicated: null,
    unanswered: all.unanswered,
    longestPauseMs: report.longestPauseMs,
    recovered: held && report.shared.held && all.http500 === 0 && all.other === 0,
    note:
      `${held ? '' : `${onStoreError} NOT HELD while down; `}${phaseNotes(report, onStoreError)}; ` +
      `/readyz before the kill ${shown(readyBefore)}, while down ${shown(readyWhileDown)}, ` +
      `after ${shown(readyAfter)}; ${all.http500} x HTTP 500 in all; ` +
      `one budget across both gateways again ${seconds(report.sharedAgainAfterMs)} after Valkey was back ` +
      `(a burst of ${report.shared.burst}: ${report.shared.admitted.join(' + ')} admitted)`,
  };
}

/** Valkey killed -9 under calls through HAProxy, `allow`: the gateways stay in rotation. */
export async function redisThroughLbRow(fleet: Pairs, log: Log): Promise<Row> {
  const fault =
    'Valkey kill -9 under rate-limited calls through HAProxy (10/s key, 4 callers), RATE_LIMIT_ON_STORE_ERROR=allow; restarted after 5 s';
  const found = await findHaproxy();
  if (found.skip) return { ...skipped(fault), note: `not run: ${found.skip}` };
  const balanced = await balance(found, fleet);
  const watch = watchServers(balanced.lb);
  let checks = 0;
  const keyFor = (label: string, rate: string, burst: number) =>
    mint(fleet, label, '--namespaces', 'memory', '--rate', rate, '--burst', String(burst));
  try {
    let killedAt = 0;
    const report = await limitsUnderRedisKill({
      urls: [balanced.lb.url],
      checkUrls: fleet.hosts.map((host) => host.url),
      key: await keyFor('chaos-redis-lb', '10/s', 10),
      namespace: 'memory',
      kill: () => {
        killedAt = Date.now();
        return fleet.valkey.kill();
      },
      restart: () => fleet.restartValkey(),
      mint: (burst) => keyFor(`chaos-redis-lb-check-${++checks}`, '1/min', burst),
      callersPerGateway: 4,
      downMs: 5000,
      log,
    });
    await watch.stop();
    const all = sumTally(everyPhase(report.tally));
    const down = sumTally(report.tally.down);
    const out = notUp(watch.samples, killedAt);
    return {
      fault,
      acknowledged: all.admitted,
      lost: null,
      duplicated: null,
      unanswered: all.unanswered,
      longestPauseMs: report.longestPauseMs,
      recovered:
        report.shared.held && all.http500 === 0 && all.other === 0 && all.noGateway === 0 && out.length === 0,
      note:
        `HAProxy: both gateways UP in ${watch.samples.length - out.length} of ${watch.samples.length} reads; ` +
        `while down (answered before Valkey's restart began): ${down.admitted} admitted, ${down.limited} x 429, ` +
        `${all.noGateway} answered by HAProxy, ${all.http500} x HTTP 500 in all; ` +
        `one budget again ${seconds(report.sharedAgainAfterMs)} after Valkey was back`,
    };
  } finally {
    await watch.stop();
    await balanced.stop();
  }
}

/**
 * `npm run chaos -- fleet valkey`: the two direct Valkey rows alone, each on a fleet of its
 * own (gateways and workers on `bootstrap`, one Postgres of the run's own), one after the other.
 */
export async function valkeyRows(bootstrap: string, log: Log): Promise<Row[]> {
  const postgres = await startOwnPostgres();
  const rows: Row[] = [];
  try {
    for (const onStoreError of ['allow', 'deny'] as const) {
      const fleet = await startPairs({
        bootstrap,
        postgresUrl: postgres.url,
        gatewayEnv: { ...STORE_ROWS_GATEWAY_ENV, RATE_LIMIT_ON_STORE_ERROR: onStoreError },
      });
      try {
        rows.push(await redisRow(fleet, onStoreError, log));
      } finally {
        await fleet.close();
      }
    }
    return rows;
  } finally {
    await postgres.close();
  }
}
