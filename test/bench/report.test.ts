/**
 * The bench's report from a run that failed part-way: what the finished phases measured is
 * written and printed, the rows and shares that need a missing phase are left out (not
 * written as NaN), and the failure names its phase.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConsumeResults } from '../../bench/event.ts';
import type { ProvenanceResults } from '../../bench/provenance.ts';
import { BenchPhaseError, inPhase, type Measured, resultsOf, tableOf } from '../../bench/report.ts';

const run = { mode: 'quick', date: '2026-11-29T04:00:00.000Z', seconds: 12, machine: { cores: 2 } };
const provenance: ProvenanceResults = {
  unsignedC64Rps: 1000,
  unsignedP99Ms: 20,
  hmac: { signUs: 50, verifyUs: 40, c64Rps: 950, p99Ms: 21 },
  ed25519: { signUs: 150, verifyUs: 280, c64Rps: 900, p99Ms: 22 },
};
const consume = { warmP50Ms: 10, warmP99Ms: 30 } as ConsumeResults;

test('a phase that throws is named in the error, with its cause kept', async () => {
  const cause = new Error('This server is not the leader for that topic-partition');
  const failed = await inPhase('provenance', async () => {
    throw cause;
  }).catch((error: unknown) => error);
  assert.ok(failed instanceof BenchPhaseError);
  assert.equal(failed.phase, 'provenance');
  assert.equal(
    failed.message,
    'bench phase "provenance" failed: This server is not the leader for that topic-partition',
  );
  assert.equal(failed.cause, cause);
  // An inner phase's name is kept, not replaced by the outer one's.
  const nested = await inPhase('outer', () => inPhase('inner', () => Promise.reject(cause))).catch((e) => e);
  assert.equal((nested as BenchPhaseError).phase, 'inner');
});

test('a run that stopped before consume writes its provenance figures without the shares of a poll', () => {
  const measured: Partial<Measured> = { provenance };
  const failed = { phase: 'consume', message: 'bench phase "consume" failed: boom' };
  const results = resultsOf(measured, run, failed) as Record<string, unknown>;
  assert.deepEqual(results.failed, failed);
  assert.equal(results.consume, undefined);
  const written = results.provenance as Record<string, number>;
  assert.equal(written.hmacSignShareOfC64, 0.05);
  assert.equal('hmacVerifyShareOfWarmPoll' in written, false);
  assert.doesNotMatch(JSON.stringify(results), /NaN|null/);
  const table = tableOf(measured, 5000);
  assert.match(table, /event_publish c64 rps signing with HMAC/);
  assert.doesNotMatch(table, /verify µs per consumed message|event_consume|NaN|undefined/);
});

test('with consume measured too, the verify shares and the consume rows are there', () => {
  const measured: Partial<Measured> = { provenance, consume };
  const written = resultsOf(measured, run).provenance!;
  assert.equal(written.hmacVerifyShareOfWarmPoll, 0.04);
  assert.match(tableOf(measured, 5000), /verify µs per consumed message: HMAC \/ Ed25519/);
  assert.equal(tableOf({}, 5000), '(nothing measured)');
});
