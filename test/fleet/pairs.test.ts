/**
 * The fleet of docs/deployment.md#fleet: two hosts, each a gateway and a broker worker with
 * its own DATA_DIR, every gateway reaching both workers over TCP, one Postgres, one Valkey
 * and the run's Kafka, behind Debian's HAProxy running deploy/haproxy/haproxy.cfg. Keys,
 * memories, rate limits, quotas and consumer groups hold across the two gateways, and a
 * gateway killed with -9 costs only the calls it had in flight.
 *
 * Kafka is the run's one broker, not the three-broker cluster: nothing here kills a broker,
 * so replicas would change no claim, and this file then runs beside the others instead of
 * in the cluster's one-at-a-time pass (docs/decisions/1001-fleet-pairs-test.md).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { runCli } from '../support/cli.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { joinGroup } from '../support/event-stack.ts';
import { gatewayKillUnderLb, KILL_PHASES } from '../support/gateway-kill-under-lb.ts';
import { findHaproxy, type Haproxy, startHaproxy } from '../support/haproxy.ts';
import { elapse, freePort, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { call, mcpClient, type Pairs, type Recorder, startPairs } from '../support/pairs.ts';
import { topicValues } from '../support/publish-under-faults.ts';

const kafka = testKafka();
const haproxy = await findHaproxy();
if (haproxy.skip) console.log(`# [fleet] skipped: ${haproxy.skip}`);
const skip = haproxy.skip ?? false;
const log = (line: string) => console.log(`# [fleet] ${line}`);

// Short, so the revocation claim is checked in seconds; the default (5 s) bounds it the same way.
const KEY_CACHE_TTL_MS = 2000;
let fleet: Pairs;
let lb: Haproxy;
let lbDir = '';
const clients: Client[] = [];

async function client(base: string, namespace: string, key: string, recorder?: Recorder): Promise<Client> {
  const connected = await mcpClient(base, namespace, key, recorder);
  clients.push(connected);
  return connected;
}

/** A key from `npm run keys -- create` on the fleet's Postgres, as an operator makes one. */
async function mintKey(label: string, ...options: string[]): Promise<string> {
  const made = await runCli('keys', ['create', '--label', label, '--json', ...options], {
    env: fleet.storeEnv,
  });
  assert.equal(made.code, 0, made.stderr);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

before(async () => {
  if (skip) return;
  fleet = await startPairs({
    bootstrap: kafka.plaintext,
    gatewayEnv: { API_KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS) },
  });
  lbDir = await mkdtemp(join(tmpdir(), 'mcp-fleet-lb-'));
  lb = await startHaproxy(haproxy as { path: string; env: Record<string, string> }, {
    dir: lbDir,
    port: await freePort(),
    backends: fleet.hosts.map((host) => ({ address: host.address, opsPort: host.opsPort })),
  });
  // Both gateways pass /readyz (state store, both workers' links, Redis), so HAProxy sends them traffic.
  await waitFor(async () => Object.values(await lb.stats()).every((server) => server.status === 'UP'), {
    what: 'HAProxy to mark both gateways UP',
    timeoutMs: 60_000,
    intervalMs: 200,
  });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await lb?.stop();
  await fleet?.close();
  if (lbDir) await rm(lbDir, { recursive: true, force: true });
});

test("a key made through one gateway's console works on both at once; revoked there, both refuse it within API_KEY_CACHE_TTL_MS", {
  skip,
  timeout: 120_000,
}, async () => {
  const [a, b] = fleet.hosts as [Pairs['hosts'][0], Pairs['hosts'][0]];
  const password = 'fleet console password';
  const account = await runCli('users', ['create', '--email', 'ops@fleet.example', '--admin'], {
    env: fleet.storeEnv,
    stdin: `${password}\n`,
  });
  assert.equal(account.code, 0, account.stderr);
  const browser = new ConsoleClient(a.url);
  assert.equal((await browser.signIn('ops@fleet.example', password)).status, 303);
  const created = await (
    await browser.post('/console/keys', {
      csrf: await browser.consoleCsrf(),
      label: 'fleet-console',
      namespace: ['memory'],
    })
  ).text();
  const key = /<output id="new-key">([^<]+)</.exec(created)?.[1];
  assert.ok(key, 'the create form answers with the key, once');
  const listed = await (await browser.get('/console')).text();
  const keyId = /data-key-id="(key_[^"]+)">\s*<td>fleet-console<\/td>/.exec(listed)?.[1];
  assert.ok(keyId, 'the console lists the new key');

  // Honoured at once by the other host: it had never looked the key up, so no cached refusal.
  const recorders: Recorder[] = [{ statuses: [] }, { statuses: [] }];
  const onB = await client(b.url, 'memory', key, recorders[1]);
  const onA = await client(a.url, 'memory', key, recorders[0]);
  const ping = async (c: Client, r: Recorder) => {
    await c.ping().catch(() => {});
    return r.statuses.at(-1);
  };
  assert.equal(await ping(onB, recorders[1]!), 200);
  assert.equal(await ping(onA, recorders[0]!), 200);

  const revoked = await browser.post('/console/keys/revoke', {
    csrf: await browser.consoleCsrf(),
    id: keyId,
  });
  assert.match(revoked.headers.get('location') ?? '', /done=revoked/);
  const revokedAt = Date.now();
  // How long each host still admitted it (reported), sampled until the cache bound has passed.
  const stillAdmittedMs = [0, 0];
  for (let round = 0; Date.now() - revokedAt <= KEY_CACHE_TTL_MS + 200 && round < 500; round++) {
    for (const [index, c] of [onA, onB].entries()) {
      if ((await ping(c, recorders[index]!)) === 200) stillAdmittedMs[index] = Date.now() - revokedAt;
    }
    await elapse(50);
  }
  log(`revoked key still admitted for ${stillAdmittedMs[0]} ms on host1, ${stillAdmittedMs[1]} ms on host2`);
  // The claim: once API_KEY_CACHE_TTL_MS has passed since the revoke, neither host admits it.
  assert.equal(await ping(onA, recorders[0]!), 401);
  assert.equal(await ping(onB, recorders[1]!), 401);
});

test('a memory written through one gateway is read, found by vector, updated and deleted through the other', {
  skip,
  timeout: 180_000,
}, async () => {
  const key = await mintKey('fleet-memory', '--namespaces', 'memory');
  const [a, b] = fleet.hosts as [Pairs['hosts'][0], Pairs['hosts'][0]];
  const onA = await client(a.url, 'memory', key);
  const onB = await client(b.url, 'memory', key);
  const written = await call<{ id: string }>(onA, 'memory_write', {
    content: 'The shared Postgres of the fleet runs on the host called db-one.',
    tags: ['fleet'],
  });
  assert.ok(written.ok, written.text);
  const id = written.data.id;
  const read = await call<{ content: string }>(onB, 'memory_get', { id });
  assert.ok(read.ok, read.text);
  assert.match(read.data.content, /db-one/);

  // The vector arm needs the stored embedding, written by host1's embedder.
  await waitFor(
    async () =>
      (await call<{ embedding_status: string }>(onB, 'memory_get', { id })).data?.embedding_status ===
      'ready',
    {
      what: 'the memory to be embedded',
      timeoutMs: 120_000,
      intervalMs: 250,
    },
  );
  const found = await call<{ hits: Array<{ id: string; source: string }> }>(onB, 'memory_search', {
    query: 'which machine is the database on',
  });
  assert.ok(found.ok, found.text);
  assert.equal(found.data.hits[0]?.id, id);
  assert.ok(['vector', 'both'].includes(found.data.hits[0]!.source), `source ${found.data.hits[0]!.source}`);

  const updated = await call(onB, 'memory_update', {
    id,
    content: 'The shared Postgres of the fleet moved to the host called db-two.',
  });
  assert.ok(updated.ok, updated.text);
  const reread = await call<{ content: string }>(onA, 'memory_get', { id });
  assert.match(reread.data.content, /db-two/);

  const deleted = await call(onB, 'memory_delete', { id });
  assert.ok(deleted.ok, deleted.text);
  const gone = await call(onA, 'memory_get', { id });
  assert.equal(gone.ok, false, 'host1 no longer finds it');
});

test("one key's rate limit and daily quota hold across both gateways", {
  skip,
  timeout: 120_000,
}, async () => {
  const [a, b] = fleet.hosts as [Pairs['hosts'][0], Pairs['hosts'][0]];
  // A burst under 128 is taken from Redis request by request (no leases): the count is exact.
  const burst = 20;
  const minted = Date.now();
  const rateKey = await mintKey(
    'fleet-rate',
    '--namespaces',
    'memory',
    '--rate',
    '1/min',
    '--burst',
    String(burst),
  );
  const recorders: Recorder[] = [{ statuses: [] }, { statuses: [] }];
  const limited = [
    await client(a.url, 'memory', rateKey, recorders[0]),
    await client(b.url, 'memory', rateKey, recorders[1]),
  ];
  for (let round = 0; round < 20; round++) {
    await Promise.all(limited.map((c) => c.listTools().catch(() => undefined)));
  }
  // Every POST took a token, the clients' initialize and notifications included.
  const admitted = recorders.map((r) => r.statuses.filter((status) => status !== 429).length);
  const refused = recorders.map((r) => r.statuses.filter((status) => status === 429).length);
  const refills = Math.ceil((Date.now() - minted) / 60_000);
  log(
    `rate: admitted ${admitted.join(' + ')} of a burst of ${burst} (+${refills} refilled), refused ${refused.join(' + ')}`,
  );
  assert.ok(
    admitted[0]! + admitted[1]! <= burst + refills,
    'the two gateways together stay within the budget',
  );
  assert.ok(admitted[0]! + admitted[1]! >= burst, 'the budget was there to spend');
  assert.ok(refused[0]! > 0 && refused[1]! > 0, 'each gateway refused once the shared budget was spent');

  const quota = 10;
  const quotaKey = await mintKey('fleet-quota', '--namespaces', 'memory', '--quota', `memory=${quota}/day`);
  const metered = [await client(a.url, 'memory', quotaKey), await client(b.url, 'memory', quotaKey)];
  // At once through both: the count in Postgres is what holds them, not either process.
  const results = await Promise.all(
    Array.from({ length: 24 }, (_, i) => call(metered[i % 2]!, 'memory_list', { limit: 1 })),
  );
  const served = results.filter((r) => r.ok).length;
  const overQuota = results.filter((r) => !r.ok && r.text.startsWith('[quota_exceeded]')).length;
  log(`quota: ${served} of 24 calls served for a quota of ${quota}, ${overQuota} refused as quota_exceeded`);
  assert.equal(served, quota);
  assert.equal(overQuota, 24 - quota);
});

test('one consumer group polled through the load balancer hands each message out once', {
  skip,
  timeout: 180_000,
}, async () => {
  const key = await mintKey('fleet-group', '--namespaces', 'event');
  const topic = uniqueName('fleet-group');
  const group = `${topic}-g`;
  const count = 150;
  await createTopic(kafka.plaintext, topic, 3);
  const pollers = [await client(lb.url, 'event', key), await client(lb.url, 'event', key)];
  await joinGroup(pollers[0]!, topic, group);
  const before = await lb.stats();
  const publisher = await client(lb.url, 'event', key);
  const failures: string[] = [];
  for (let sent = 0; sent < count; sent += 10) {
    const batch = Array.from({ length: 10 }, (_, i) =>
      call(publisher, 'event_publish', { topic, value: `m${sent + i}` }),
    );
    for (const result of await Promise.all(batch)) if (!result.ok) failures.push(`publish: ${result.text}`);
  }
  const seen = new Map<string, number>();
  const values = new Set<string>();
  for (let polls = 0; values.size < count && polls < 200; polls++) {
    const answers = await Promise.all(
      pollers.map((p) =>
        call<{ messages: Array<{ partition: number; offset: number; value: string }> }>(p, 'event_consume', {
          topic,
          group,
          timeout_ms: 2000,
          max: 20,
        }),
      ),
    );
    for (const answer of answers) {
      if (!answer.ok) failures.push(`poll: ${answer.text}`);
      for (const m of answer.data?.messages ?? []) {
        const at = `${m.partition}:${m.offset}`;
        seen.set(at, (seen.get(at) ?? 0) + 1);
        values.add(m.value);
      }
    }
  }
  const after = await lb.stats();
  const twice = [...seen.values()].filter((n) => n > 1).length;
  const perServer = lb.names.map((name) => after[name]!.answered2xx - before[name]!.answered2xx);
  log(
    `group: ${values.size} of ${count} delivered, ${twice} twice, answers per gateway ${perServer.join(' / ')}`,
  );
  assert.deepEqual(failures, []);
  assert.equal(values.size, count);
  assert.equal(twice, 0, 'no message was handed out twice');
  assert.ok(
    perServer.every((n) => n > 0),
    'both gateways answered',
  );
});

test('kill -9 of one gateway behind HAProxy: the other answers; restarted, it is back once /readyz passes', {
  skip,
  timeout: 240_000,
}, async () => {
  const key = await mintKey('fleet-kill', '--namespaces', 'event');
  const topic = uniqueName('fleet-kill');
  await createTopic(kafka.plaintext, topic, 1);
  const callers = await Promise.all(Array.from({ length: 4 }, () => client(lb.url, 'event', key)));
  const { tally, marks, failedLate, acknowledged, bounded } = await gatewayKillUnderLb({
    fleet,
    lb,
    callers,
    topic,
  });
  const since = (a: string, b: string) => (marks[b] ?? Number.NaN) - (marks[a] ?? Number.NaN);
  log(
    `kill -9 of host1 under ${callers.length} callers through HAProxy: kill to DOWN ${since('kill', 'down')} ms, ` +
      `restart to listening ${since('restart', 'listening')} ms, to /readyz ${since('restart', 'ready')} ms, ` +
      `to UP ${since('restart', 'up')} ms; ${JSON.stringify(tally)}`,
  );
  assert.ok(bounded, 'every step happened within the bounded number of calls');
  assert.ok(tally.down.answered >= 100, 'calls were answered through host2 while host1 was down');
  const lost = tally.before.unanswered + tally.killed.unanswered;
  log(`${lost} calls lost at the kill, ${failedLate.length} after HAProxy marked host1 DOWN`);
  const after = KILL_PHASES.filter((name) => name !== 'before');
  assert.equal(
    after.reduce((sum, name) => sum + tally[name].toolErrors, 0),
    0,
    'no call was refused',
  );
  // What host1 held as it died is lost: a call whose request had reached it (or its listen
  // backlog, open until the kernel has torn the process down) is not resent, since resending
  // could publish twice. Once HAProxy's checks took it out, nothing fails: a refused
  // connection goes to host2 (retry-on conn-failure, redispatch), and nothing goes to host1
  // until its /readyz passes again.
  assert.deepEqual(failedLate, [], 'no call failed once host1 was marked DOWN');
  // Every acknowledged publish is in the topic, and none twice: no call was run twice.
  const inTopic = await topicValues(kafka.plaintext, topic);
  assert.deepEqual(
    acknowledged.filter((value) => !inTopic.has(value)),
    [],
    'no acknowledged publish lost',
  );
  assert.deepEqual(
    [...inTopic].filter(([, count]) => count > 1),
    [],
    'no value published twice',
  );
});
