/**
 * Leased rate limits: each listener thread takes a share of a key's burst at once and
 * spends it without touching the bucket. Two RateGates stand for two listener threads (on
 * one real shared-memory table) or two processes (on one real Valkey); the counts below
 * are exact because the rates are per minute, so nothing refills during a test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startValkey, type ValkeyServer } from '../../dev/valkey/valkey.ts';
import { type KeyLimits, ratePolicy } from '../../gateway/core/key-limits.ts';
import { LEASE_MAX, leaseSize, RateGate } from '../../gateway/limits/rate-gate.ts';
import { RedisRateStore } from '../../gateway/limits/redis-store.ts';
import { parseRedisUrl, RespClient } from '../../gateway/limits/resp-client.ts';
import { SharedLimitTable } from '../../gateway/limits/shared-table.ts';
import { freePort, waitFor } from '../support/harness.ts';

const log = pino({ level: 'silent' });
const newTable = () => new SharedLimitTable(new SharedArrayBuffer(65_536 * 20));
const perMinute = (burst: number): KeyLimits => ({ rate: { count: 1, per: 'min' }, burst });
const keyId = () => `key_${Math.random().toString(36).slice(2)}`;

/** Sends `count` requests through the gates in turn; returns how many each admitted and how many waited on a promise. */
async function send(gates: RateGate[], id: string, limits: KeyLimits, count: number) {
  const admitted = gates.map(() => 0);
  let awaited = 0;
  for (let i = 0; i < count; i++) {
    const which = i % gates.length;
    let answer = (gates[which] as RateGate).check(id, limits, 'event');
    if (answer instanceof Promise) {
      awaited += 1;
      answer = await answer;
    }
    if (answer === null) admitted[which] = (admitted[which] as number) + 1;
    else assert.equal(answer.status, 429);
  }
  return { admitted, total: admitted.reduce((a, b) => a + b, 0), awaited };
}

test('a lease is 1/128 of the burst split over the listener threads, at least 1 and at most 1,000', () => {
  const policy = (burst: number) => ratePolicy({ count: 1, per: 'min' }, burst);
  assert.equal(leaseSize(policy(40)), 1);
  assert.equal(leaseSize(policy(256)), 2);
  assert.equal(leaseSize(policy(1280)), 10);
  assert.equal(leaseSize(policy(1280), 5), 2);
  assert.equal(leaseSize(policy(1_000_000)), LEASE_MAX);
});

describe('in memory', () => {
  test('two threads leasing from one table admit exactly the burst, and nothing stays leased', async () => {
    const table = newTable();
    const gates = [0, 1].map(() => new RateGate({ table, defaultPolicy: null, onStoreError: 'allow', log }));
    const id = keyId();
    const sent = await send(gates, id, perMinute(1280), 1400);
    assert.equal(sent.total, 1280);
    assert.equal(sent.awaited, 0, 'the in-memory limiter never answers with a promise');
    // Both threads kept being asked, so each spent what it leased.
    assert.deepEqual(
      gates.map((gate) => gate.leasedFor(id)),
      [0, 0],
    );
    await Promise.all(gates.map((gate) => gate.close()));
  });

  test('a lease left unused goes back to the bucket for the other threads', async () => {
    const table = newTable();
    const [idle, busy] = [0, 1].map(
      () => new RateGate({ table, defaultPolicy: null, onStoreError: 'allow', log }),
    ) as [RateGate, RateGate];
    const id = keyId();
    assert.equal((await send([idle], id, perMinute(1280), 1)).total, 1);
    assert.equal(idle.leasedFor(id), 9, 'one request leased 10 and spent 1');
    await waitFor(() => idle.leasedFor(id) === 0, {
      what: 'the idle lease to be given back',
      timeoutMs: 10_000,
    });
    // Only the one request spent is missing from the other thread's budget.
    assert.equal((await send([busy], id, perMinute(1280), 1300)).total, 1279);
    await Promise.all([idle.close(), busy.close()]);
  });
});

describe('through Valkey', () => {
  let valkey: ValkeyServer;
  let admin: RespClient;
  before(async () => {
    valkey = await startValkey(await freePort());
    admin = new RespClient(parseRedisUrl(valkey.url), 5_000);
  });
  after(async () => {
    await admin?.close();
    await valkey?.stop();
  });

  /** Rate-limit script runs the server has answered so far. */
  async function scriptCalls(): Promise<number> {
    const info = String(await admin.command(['INFO', 'commandstats']));
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return calls('evalsha') + calls('eval');
  }

  const gateOn = (store: RedisRateStore, onStoreError: 'allow' | 'deny' = 'allow') =>
    new RateGate({ table: newTable(), defaultPolicy: null, remote: store, onStoreError, log });

  test('two processes hold a key to its burst with one Redis call per lease, not per request', async () => {
    const gates = [0, 1].map(() => gateOn(new RedisRateStore(valkey.url)));
    const id = keyId();
    const before = await scriptCalls();
    const sent = await send(gates, id, perMinute(1280), 1400);
    const calls = (await scriptCalls()) - before;
    assert.equal(sent.total, 1280);
    // Leases of 10: 128 of them cover the burst; refusals after it are remembered, not asked again.
    assert.ok(calls <= 140, `${calls} script calls for ${sent.total} admitted requests`);
    assert.ok(sent.awaited <= calls, `${sent.awaited} requests waited on Redis`);
    await Promise.all(gates.map((gate) => gate.close()));
  });

  test('a closing process gives its unspent lease back', async () => {
    const [first, second] = [0, 1].map(() => gateOn(new RedisRateStore(valkey.url))) as [RateGate, RateGate];
    const id = keyId();
    assert.equal((await send([first], id, perMinute(1280), 1)).total, 1);
    assert.equal(first.leasedFor(id), 9);
    await first.close();
    assert.equal((await send([second], id, perMinute(1280), 1300)).total, 1279);
    await second.close();
  });

  test('with Redis gone, deny spends the lease it holds and then answers 503', async () => {
    const port = await freePort();
    const own = await startValkey(port);
    const gate = gateOn(new RedisRateStore(own.url), 'deny');
    const id = keyId();
    assert.equal((await send([gate], id, perMinute(1280), 1)).total, 1);
    const held = gate.leasedFor(id);
    assert.ok(held > 0);
    await own.kill();
    const statuses: number[] = [];
    for (let i = 0; i < held + 3; i++) {
      const answer = await gate.check(id, perMinute(1280), 'event');
      statuses.push(answer === null ? 200 : answer.status);
    }
    assert.deepEqual(statuses, [...Array(held).fill(200), 503, 503, 503]);
    await gate.close();
    await own.stop();
  });

  test('with Redis gone, allow spends the lease it holds, then counts each request in this process with a metric event', async () => {
    const own = await startValkey(await freePort());
    const events: string[] = [];
    const warnings: string[] = [];
    const gate = new RateGate({
      table: newTable(),
      defaultPolicy: null,
      remote: new RedisRateStore(own.url),
      onStoreError: 'allow',
      log: pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }),
      observe: (event) => events.push(event.kind),
    });
    const id = keyId();
    assert.equal((await send([gate], id, perMinute(1280), 1)).total, 1);
    const held = gate.leasedFor(id);
    await own.kill();
    const sent = await send([gate], id, perMinute(1280), held + 5);
    assert.equal(sent.total, held + 5, 'the process’s own bucket admits what the lease did not cover');
    assert.deepEqual(events, Array(5).fill('rate_store_unavailable'));
    assert.equal(warnings.filter((line) => line.includes('rate-limit store unreachable')).length, 1);
    await gate.close();
    await own.stop();
  });
});
