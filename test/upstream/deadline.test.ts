/**
 * The deadline every upstream call and the local reranker wait under: it fires through
 * garbage collections (Node 20 loses an AbortSignal.timeout held only inside
 * AbortSignal.any), passes the caller's cancel on with its reason, and once cleared
 * neither fires nor keeps hold of the caller's signal.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { startDeadline } from '../../gateway/upstream/deadline.ts';
import { whileCollecting } from '../support/gc.ts';

test('the deadline fires through garbage collections, as a TimeoutError', { timeout: 60_000 }, async () => {
  const within = startDeadline(new AbortController().signal, 200);
  // Only the listener's promise holds on to the signal, as a pending fetch does.
  await whileCollecting(once(within.signal, 'abort'));
  assert.equal(within.signal.reason.name, 'TimeoutError');
  within.clear();
});

test("the caller's cancel ends the wait with the caller's reason, already aborted or later", () => {
  const caller = new AbortController();
  const within = startDeadline(caller.signal, 60_000);
  assert.equal(within.signal.aborted, false);
  caller.abort(new Error('client went away'));
  assert.equal(within.signal.reason.message, 'client went away');
  within.clear();
  const early = startDeadline(AbortSignal.abort('gone'), 60_000);
  assert.equal(early.signal.reason, 'gone');
  early.clear();
});

test('a cleared deadline neither fires nor follows the caller any more', async () => {
  const caller = new AbortController();
  const within = startDeadline(caller.signal, 20);
  within.clear();
  caller.abort();
  // Longer than the deadline was: had its timer survived clear(), it would have fired by now.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(within.signal.aborted, false);
});
