/**
 * The fleet's one Valkey (RATE_LIMIT_REDIS_URL) killed -9 while rate-limited calls flow
 * through two gateway processes sharing it and one Postgres, then started again (empty: it
 * persists nothing). Each RATE_LIMIT_ON_STORE_ERROR setting gets a fleet of its own: `allow`
 * keeps deciding on each process's own limit, `deny` refuses with a JSON 503 naming the
 * setting. Either way no call gets a 500 or goes unanswered, and once Valkey is back one
 * key's budget holds across both gateways again, neither restarted. A call answered once
 * Valkey's restart has begun is counted apart from the outage (the new, empty server may
 * admit it); under deny the restart is held until each gateway has reached the new server,
 * so that case is met every run (record 1201). No broker is needed:
 * the gateways run without workers, so this file runs beside the others.
 * The fault is driven by test/support/limits-under-redis-kill.ts, as in `npm run chaos -- fleet`.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { waitFor } from '../support/harness.ts';
import {
  LIMITS_PHASES,
  type LimitsOutageReport,
  limitsUnderRedisKill,
  send,
  sumTally,
} from '../support/limits-under-redis-kill.ts';
import { type Pairs, startPairs } from '../support/pairs.ts';

const log = (line: string) => console.log(`# [fleet] ${line}`);
const fleets: Pairs[] = [];
after(async () => {
  for (const fleet of fleets) await fleet.close();
});

async function mint(fleet: Pairs, label: string, rate: string, burst: number): Promise<string> {
  const made = await runCli(
    'keys',
    [
      'create',
      '--label',
      label,
      '--namespaces',
      'memory',
      '--rate',
      rate,
      '--burst',
      String(burst),
      '--json',
    ],
    { env: fleet.storeEnv },
  );
  assert.equal(made.code, 0, made.stderr);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

/**
 * Valkey started again, then (deny) held in the `restarting` phase until a probe key's call is
 * admitted through every gateway: each has reached the new server while the load's calls are
 * still counted apart from `down`, as happens by chance when a gateway reconnects before the
 * harness sees the server answer (the campaign of 2026-11-29 once counted such admissions as
 * "while down").
 */
async function restart(fleet: Pairs, probe: string | undefined): Promise<void> {
  await fleet.restartValkey();
  if (probe === undefined) return;
  for (const host of fleet.hosts) {
    await waitFor(async () => (await send(host.url, 'memory', probe)).status === 200, {
      what: `${host.url} to admit a call from the restarted Valkey`,
      timeoutMs: 30_000,
      intervalMs: 50,
    });
  }
}

async function run(onStoreError: 'allow' | 'deny'): Promise<LimitsOutageReport> {
  const fleet = await startPairs({ gatewayEnv: { RATE_LIMIT_ON_STORE_ERROR: onStoreError } });
  fleets.push(fleet);
  let minted = 0;
  const probe =
    onStoreError === 'deny' ? await mint(fleet, 'redis-kill-deny-probe', '1/min', 100) : undefined;
  const report = await limitsUnderRedisKill({
    urls: fleet.hosts.map((host) => host.url),
    // 10 a second: its bucket is empty for at most 100 ms, so the load keeps reaching Valkey.
    key: await mint(fleet, `redis-kill-${onStoreError}`, '10/s', 10),
    namespace: 'memory',
    kill: () => fleet.valkey.kill(),
    restart: () => restart(fleet, probe),
    mint: (burst) => mint(fleet, `redis-kill-${onStoreError}-check-${++minted}`, '1/min', burst),
    log,
  });
  const line = (phase: keyof LimitsOutageReport['tally']) => JSON.stringify(sumTally(report.tally[phase]));
  log(
    `Valkey kill -9, ${onStoreError}: before ${line('before')}; down ${line('down')}; ` +
      `restarting ${line('restarting')} (admitted at ${report.admittedWhileRestartingAtMs.join(', ')} ms ` +
      `of a restart that took ${report.restartTookMs} ms); after ${line('after')}; longest pause ${report.longestPauseMs} ms, deciding again ${report.decidingAgainAfterMs} ms and ` +
      `shared again ${report.sharedAgainAfterMs} ms after Valkey was back; check ${JSON.stringify(report.shared)}`,
  );
  for (const phase of LIMITS_PHASES) {
    const total = sumTally(report.tally[phase]);
    assert.equal(total.http500, 0, `${phase}: no HTTP 500`);
    assert.equal(total.unanswered, 0, `${phase}: every call answered within its deadline`);
    assert.equal(total.other, 0, `${phase}: only 200, 429 and the setting's 503; ${report.odd.join(' | ')}`);
  }
  assert.ok(report.shared.held, `one budget across both gateways again: ${JSON.stringify(report.shared)}`);
  return report;
}

test('Valkey killed -9 under load, RATE_LIMIT_ON_STORE_ERROR=allow: each gateway keeps deciding on its own limit', {
  timeout: 240_000,
}, async () => {
  const report = await run('allow');
  report.tally.down.forEach((gateway, index) => {
    assert.equal(gateway.storeRefused, 0, `gateway ${index + 1} refused nothing for the store`);
    assert.ok(gateway.admitted > 0, `gateway ${index + 1} admitted calls while Valkey was down`);
    assert.ok(
      gateway.limited > 0,
      `gateway ${index + 1} still held the key to a limit while Valkey was down`,
    );
  });
});

test('Valkey killed -9 under load, RATE_LIMIT_ON_STORE_ERROR=deny: a JSON 503 naming the setting, never a 200', {
  timeout: 240_000,
}, async () => {
  const report = await run('deny');
  report.tally.down.forEach((gateway, index) => {
    assert.ok(gateway.storeRefused > 0, `gateway ${index + 1} refused for the store while Valkey was down`);
    // Bursts under 128 are taken from Valkey call by call: no lease held over lets one through.
    assert.equal(gateway.admitted, 0, `gateway ${index + 1} admitted nothing while no Valkey ran`);
  });
  // The new, empty Valkey (a full bucket) decided the load's calls before the harness called it back:
  // counted as restarting, not as admitted while down.
  assert.ok(
    sumTally(report.tally.restarting).admitted > 0,
    `the restarted Valkey admitted calls made while it was starting: ${JSON.stringify(report.tally.restarting)}`,
  );
  const [status, ...body] = report.storeRefusals[0]!.split(' ');
  assert.equal(status, '503');
  const refusal = JSON.parse(body.join(' ')) as { error?: { message?: string } };
  assert.match(String(refusal.error?.message), /RATE_LIMIT_ON_STORE_ERROR=deny/);
});
