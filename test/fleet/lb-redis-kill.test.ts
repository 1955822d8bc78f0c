/**
 * The fleet's one Valkey killed -9 while rate-limited calls go THROUGH HAProxy running
 * deploy/haproxy/haproxy.cfg to two gateways, then started again (empty). With
 * RATE_LIMIT_ON_STORE_ERROR=allow the Redis readiness check is advisory (decision 1002), so
 * HAProxy keeps both gateways UP and they answer every call (200 or 429) on their own
 * limits; with deny both fail /readyz, HAProxy takes them out and answers itself with
 * deploy/haproxy/errors/503.http. Either way no caller sees a 500, and one key's budget holds
 * across both gateways again once Valkey is back. test/fleet/redis-kill.test.ts is the same
 * fault without the load balancer. Each host runs its worker on the run's Kafka (nothing
 * here publishes): /readyz asks the worker link too, and HAProxy sends nothing to a gateway
 * that fails it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { findHaproxy, type ServerStat } from '../support/haproxy.ts';
import { testKafka } from '../support/kafka-env.ts';
import { allUp, type Balanced, balance, notUp, watchServers } from '../support/lb-watch.ts';
import { everyPhase, limitsUnderRedisKill, sumTally } from '../support/limits-under-redis-kill.ts';
import { type Pairs, startPairs } from '../support/pairs.ts';

const kafka = testKafka();
const haproxy = await findHaproxy();
if (haproxy.skip) console.log(`# [fleet] skipped: ${haproxy.skip}`);
const log = (line: string) => console.log(`# [fleet] ${line}`);
const fleets: Pairs[] = [];
const balancers: Balanced[] = [];
after(async () => {
  for (const balanced of balancers) await balanced.stop();
  for (const fleet of fleets) await fleet.close();
});

async function mint(fleet: Pairs, label: string, rate: string, burst: number): Promise<string> {
  const options = ['--label', label, '--namespaces', 'memory', '--rate', rate, '--burst', String(burst)];
  const made = await runCli('keys', ['create', ...options, '--json'], { env: fleet.storeEnv });
  assert.equal(made.code, 0, made.stderr);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

/** Per server, the answers (2xx and 4xx) it gave through HAProxy between two readings. */
const answeredBetween = (from: Record<string, ServerStat>, to: Record<string, ServerStat>) =>
  Object.keys(to).map(
    (name) =>
      to[name]!.answered2xx + to[name]!.answered4xx - from[name]!.answered2xx - from[name]!.answered4xx,
  );

async function run(onStoreError: 'allow' | 'deny') {
  const fleet = await startPairs({
    bootstrap: kafka.plaintext,
    gatewayEnv: { RATE_LIMIT_ON_STORE_ERROR: onStoreError },
  });
  fleets.push(fleet);
  const balanced = await balance(haproxy, fleet);
  balancers.push(balanced);
  const { lb } = balanced;
  const watch = watchServers(lb);
  const marks = { killedAt: 0, restartedAt: 0 };
  const readings: Record<string, ServerStat>[] = [];
  let minted = 0;
  const report = await limitsUnderRedisKill({
    urls: [lb.url],
    callersPerGateway: 4,
    checkUrls: fleet.hosts.map((host) => host.url),
    key: await mint(fleet, `lb-redis-${onStoreError}`, '10/s', 10),
    namespace: 'memory',
    kill: async () => {
      readings.push(await lb.stats());
      marks.killedAt = Date.now();
      await fleet.valkey.kill();
    },
    restart: async () => {
      readings.push(await lb.stats());
      await fleet.restartValkey();
      marks.restartedAt = Date.now();
    },
    // deny: down until HAProxy has taken every gateway out and answered for itself a while.
    whileDown:
      onStoreError === 'deny'
        ? async () => {
            const deadline = Date.now() + 30_000;
            while (!watch.noneUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
            await new Promise((r) => setTimeout(r, 1500));
          }
        : undefined,
    mint: (burst) => mint(fleet, `lb-redis-${onStoreError}-check-${++minted}`, '1/min', burst),
    log,
  });
  await allUp(lb);
  await watch.stop();
  const all = sumTally(everyPhase(report.tally));
  const down = sumTally(report.tally.down);
  const restarting = sumTally(report.tally.restarting);
  const after = sumTally(report.tally.after);
  const firstOut = watch.samples.find(
    (s) => s.at >= marks.killedAt && Object.values(s.statuses).some((v) => v !== 'UP'),
  );
  const allOut = watch.samples.find(
    (s) => s.at >= marks.killedAt && Object.values(s.statuses).every((v) => v.startsWith('DOWN')),
  );
  const backUp = watch.samples.find(
    (s) => s.at >= marks.restartedAt && Object.values(s.statuses).every((v) => v === 'UP'),
  );
  log(
    `through HAProxy, Valkey kill -9, ${onStoreError}: before ${JSON.stringify(sumTally(report.tally.before))}; ` +
      `down ${JSON.stringify(down)}; restarting ${JSON.stringify(restarting)}; after ${JSON.stringify(after)}; ` +
      `answered per gateway while down ${JSON.stringify(answeredBetween(readings[0]!, readings[1]!))}; ` +
      `first server not UP ${firstOut ? firstOut.at - marks.killedAt : '-'} ms, none UP ` +
      `${allOut ? allOut.at - marks.killedAt : '-'} ms after the kill; both UP ${backUp ? backUp.at - marks.restartedAt : '-'} ms ` +
      `after Valkey was back; longest pause ${report.longestPauseMs} ms; shared again ${report.sharedAgainAfterMs} ms ` +
      `after; check ${JSON.stringify(report.shared)}; load balancer's 503 ${JSON.stringify(report.noGateway[0] ?? '')}`,
  );
  assert.equal(all.http500, 0, 'no HTTP 500 in any phase');
  // deny: HAProxy 2.6 closes a kept-alive client connection without an answer when a call it
  // is retrying after a gateway's 503 finds no server left, at the moment the last goes DOWN.
  const unanswered =
    onStoreError === 'deny' ? all.unanswered - down.unanswered - restarting.unanswered : all.unanswered;
  assert.equal(unanswered, 0, 'every call answered within its deadline (deny: but while Valkey was down)');
  const closed = report.odd.filter((sample) => sample.startsWith('0 '));
  assert.deepEqual(
    closed.filter((sample) => !sample.includes('other side closed')),
    [],
    'a call unanswered only by its connection closed',
  );
  assert.equal(all.other, 0, `only 200, 429 and the two JSON 503s: ${report.odd.join(' | ')}`);
  assert.ok(report.shared.held, `one budget across both gateways again: ${JSON.stringify(report.shared)}`);
  return { report, watch, marks, readings, down, restarting, after };
}

test('Valkey killed -9 under calls through HAProxy, allow: both gateways stay UP and answer every call', {
  skip: haproxy.skip ?? false,
  timeout: 240_000,
}, async () => {
  const { watch, marks, readings, down, restarting, after } = await run('allow');
  assert.deepEqual(notUp(watch.samples, marks.killedAt), [], 'HAProxy kept both gateways UP throughout');
  assert.equal(
    down.noGateway + restarting.noGateway + after.noGateway,
    0,
    'HAProxy never answered for itself',
  );
  assert.equal(down.storeRefused, 0, 'no gateway refused for the store');
  assert.ok(down.admitted > 0 && down.limited > 0, 'calls were admitted and limited while Valkey was down');
  const perGateway = answeredBetween(readings[0]!, readings[1]!);
  assert.ok(
    perGateway.every((n) => n > 0),
    `both gateways answered while Valkey was down: ${perGateway}`,
  );
});

test('Valkey killed -9 under calls through HAProxy, deny: gateways leave rotation, HAProxy answers JSON 503', {
  skip: haproxy.skip ?? false,
  timeout: 240_000,
}, async () => {
  const { watch, marks, report, down } = await run('deny');
  assert.ok(
    watch.samples.some(
      (s) => s.at >= marks.killedAt && Object.values(s.statuses).every((v) => v.startsWith('DOWN')),
    ),
    'HAProxy took both gateways out',
  );
  assert.equal(down.admitted, 0, 'nothing admitted while Valkey was down');
  assert.ok(down.noGateway > 0, 'HAProxy answered for itself while no gateway was UP');
  const [status, contentType, retryAfter, ...body] = report.noGateway[0]!.split(' ');
  assert.equal(status, '503');
  assert.equal(contentType, 'application/json');
  assert.equal(retryAfter, 'retry-after=5');
  assert.equal((JSON.parse(body.join(' ')) as { error?: string }).error, 'no_gateway_available');
});
