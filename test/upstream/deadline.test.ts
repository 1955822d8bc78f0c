/**
 * The deadline every upstream call and the local reranker wait under: it fires through
 * garbage collections (Node 20 loses an AbortSignal.timeout held only inside
 * AbortSignal.any), passes the caller's cancel on with its reason, and once cleared
 * neither fires nor keeps hold of the caller's signal. And fetchWithin, the fetch memory's
 * embeddings and write decider make outside createUpstreamHttp, ending a stalled body.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { fetchWithin, startDeadline } from '../../gateway/upstream/deadline.ts';
import { startLoopback } from '../support/contracts/loopback.ts';
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

test('fetchWithin ends a body that stalls midway at its deadline through collections, and lets go of the socket', {
  timeout: 60_000,
}, async () => {
  const server = await startLoopback((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok": true}');
  });
  try {
    server.faults.push({ match: 'POST /v1', stall: 'half', body: '{"data": [{"embedding": [0.1, 0.2]}]}' });
    const stalled = fetchWithin(
      `${server.url}/v1/embeddings`,
      { method: 'POST', body: '{}', redirect: 'error' },
      1000,
    );
    await assert.rejects(whileCollecting(stalled), { name: 'TimeoutError' });
    await whileCollecting(server.released());
    const answer = await fetchWithin(`${server.url}/v1/embeddings`, { method: 'POST', body: '{}' }, 30_000);
    assert.deepEqual([answer.status, answer.json()], [200, { ok: true }]);
  } finally {
    await server.close();
  }
});
