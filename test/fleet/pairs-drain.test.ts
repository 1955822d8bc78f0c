/**
 * A planned stop behind the load balancer: SIGTERM to one gateway of the fleet
 * (docs/deployment.md#fleet) while callers publish through HAProxy running
 * deploy/haproxy/haproxy.cfg. The gateway drains and its /readyz answers 503, so HAProxy
 * takes it out; what the callers see meanwhile is counted. The kill -9 case is in
 * pairs.test.ts; this file shares its fleet helpers, not its fleet, so either runs alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { runCli } from '../support/cli.ts';
import { findHaproxy, type Haproxy, startHaproxy } from '../support/haproxy.ts';
import { freePort, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { call, mcpClient, type Pairs, startPairs } from '../support/pairs.ts';

const kafka = testKafka();
const haproxy = await findHaproxy();
if (haproxy.skip) console.log(`# [fleet] skipped: ${haproxy.skip}`);
const log = (line: string) => console.log(`# [fleet] ${line}`);

let fleet: Pairs | undefined;
let lb: Haproxy | undefined;
let lbDir = '';
const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await lb?.stop();
  await fleet?.close();
  if (lbDir) await rm(lbDir, { recursive: true, force: true });
});

test('SIGTERM of one gateway behind HAProxy under load: it drains, leaves rotation, and no call fails', {
  skip: haproxy.skip ?? false,
  timeout: 180_000,
}, async () => {
  fleet = await startPairs({ bootstrap: kafka.plaintext });
  lbDir = await mkdtemp(join(tmpdir(), 'mcp-fleet-lb-'));
  lb = await startHaproxy(haproxy as { path: string; env: Record<string, string> }, {
    dir: lbDir,
    port: await freePort(),
    backends: fleet.hosts.map((host) => ({ address: host.address, opsPort: host.opsPort })),
  });
  const balancer = lb;
  await waitFor(async () => Object.values(await balancer.stats()).every((s) => s.status === 'UP'), {
    what: 'HAProxy to mark both gateways UP',
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  const made = await runCli('keys', ['create', '--label', 'fleet-drain', '--namespaces', 'event', '--json'], {
    env: fleet.storeEnv,
  });
  assert.equal(made.code, 0, made.stderr);
  const key = (JSON.parse(made.stdout) as { key: string }).key;
  const topic = uniqueName('fleet-drain');
  await createTopic(kafka.plaintext, topic, 1);
  for (let i = 0; i < 4; i++) clients.push(await mcpClient(balancer.url, 'event', key));

  let phase: 'before' | 'draining' | 'out' = 'before';
  const answered = { before: 0, draining: 0, out: 0 };
  const failures: string[] = [];
  let stop = false;
  let sent = 0;
  const MAX_CALLS = 20_000;
  const load = clients.map(async (c) => {
    while (!stop && sent < MAX_CALLS) {
      const at = phase;
      const result = await call(c, 'event_publish', { topic, value: `d${sent++}` });
      if (result.ok) answered[at]++;
      else failures.push(`${at}: ${result.text.slice(0, 200)}`);
    }
  });
  const until = (what: string, check: () => boolean | Promise<boolean>) =>
    waitFor(async () => (await check()) || sent >= MAX_CALLS, { what, timeoutMs: 120_000, intervalMs: 50 });
  let exitCode: number | null = null;
  const stoppedAt = Date.now();
  let outAfterMs = 0;
  try {
    await until('50 calls answered', () => answered.before >= 50);
    phase = 'draining';
    const exited = fleet.hosts[0]!.gateway.stop();
    await until(
      'HAProxy to take host1 out',
      async () => !(await balancer.stats()).host1!.status.startsWith('UP'),
    );
    outAfterMs = Date.now() - stoppedAt;
    phase = 'out';
    exitCode = await exited;
    await until('100 calls answered with host1 out', () => answered.out >= 100);
  } finally {
    stop = true;
    await Promise.all(load);
  }
  log(
    `SIGTERM of host1 under 4 callers through HAProxy: out of rotation after ${outAfterMs} ms; ` +
      `answered ${JSON.stringify(answered)}; ${failures.length} failed ${JSON.stringify(failures.slice(0, 5))}`,
  );
  assert.ok(sent < MAX_CALLS, 'every step happened within the bounded number of calls');
  assert.equal(exitCode, 0, 'host1 drained and exited cleanly');
  assert.deepEqual(failures, [], 'no call failed through the planned stop');
});
