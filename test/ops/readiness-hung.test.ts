/**
 * Readiness against a broker worker that hangs (SIGSTOP: its socket stays open, nothing
 * answers) rather than one that exited: /readyz must still answer, say the worker is not
 * ready, and come back once the worker runs again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startReadinessStack } from './support/readiness-stack.ts';

test('a hung broker worker makes /readyz answer 503 naming it, and ready again once it runs', async () => {
  const stack = await startReadinessStack();
  const { worker } = stack;
  try {
    await stack.untilReady('every check to pass');
    worker.child.kill('SIGSTOP');
    const hung = await stack.readyz();
    assert.equal(hung.status, 503, JSON.stringify(hung.body));
    assert.equal(hung.body.ready, false);
    assert.equal(hung.body.checks.broker_worker?.ok, false);
    assert.equal(typeof hung.body.checks.broker_worker?.error, 'string');
    // Only the hung dependency fails: the others were not held up by it.
    assert.equal(hung.body.checks.state_store?.ok, true);
    assert.equal(hung.body.checks.namespace_memory?.ok, true);
    worker.child.kill('SIGCONT');
    await stack.untilReady('readiness to return once the worker runs again');
  } finally {
    worker.child.kill('SIGCONT');
    await stack.close();
  }
});
