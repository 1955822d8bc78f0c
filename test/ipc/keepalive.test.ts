/**
 * IPC keepalive against a real broker-worker process that is frozen with SIGSTOP: its socket
 * stays open, so only the keepalive can tell the gateway that it no longer runs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import { type ConnectedWorker, startConnectedWorker } from '../broker-worker/support/worker-process.ts';
import { waitFor } from '../support/harness.ts';

let stack: ConnectedWorker;
before(async () => {
  stack = await startConnectedWorker({});
});
after(async () => {
  stack.worker.child.kill('SIGCONT');
  await stack.close();
});

test('a stopped worker fails calls fast with a clear error, and is used again once it runs', async () => {
  const status = await stack.client.call('status', {}, { timeoutMs: 5000 });
  assert.equal(typeof status.workerId, 'string');

  stack.worker.child.kill('SIGSTOP');
  // A deadline of ten minutes: the call can only end early through the keepalive.
  await assert.rejects(stack.client.call('status', {}, { timeoutMs: 600_000 }), (error: unknown) => {
    assert.ok(error instanceof WorkerCallError);
    assert.equal(error.code, 'WORKER_UNREACHABLE');
    assert.match(error.message, /stopped answering/);
    return true;
  });
  // While it stays stopped, new calls are refused as unreachable instead of queuing.
  await assert.rejects(stack.client.call('status', {}, { timeoutMs: 600_000 }), (error: unknown) => {
    assert.ok(error instanceof WorkerCallError && error.code === 'WORKER_UNREACHABLE');
    return true;
  });

  stack.worker.child.kill('SIGCONT');
  const again = await waitFor(
    () => stack.client.call('status', {}, { timeoutMs: 5000 }).catch(() => undefined),
    {
      what: 'the resumed worker to answer status',
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
  assert.equal((again as { workerId: string }).workerId, status.workerId);
});
