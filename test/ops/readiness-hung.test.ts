/**
 * Readiness against a broker worker that hangs (SIGSTOP: its socket stays open, nothing
 * answers) rather than one that exited: /readyz must still answer, say the worker is not
 * ready, and come back once the worker runs again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../gateway/logger.ts';
import { startOpsListener } from '../../gateway/ops/ops-server.ts';
import { clientFor, startWorker } from '../broker-worker/support/worker-process.ts';
import { startTestGateway } from '../support/gateway.ts';
import { waitFor } from '../support/harness.ts';

interface Readiness {
  status: number;
  body: { ready: boolean; checks: Record<string, { ok: boolean; error?: string }> };
}

async function readyz(url: string): Promise<Readiness> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness['body'] };
}

test('a hung broker worker makes /readyz answer 503 naming it, and ready again once it runs', async () => {
  const worker = await startWorker({});
  const broker = clientFor(worker.address);
  const gw = await startTestGateway({ broker });
  const ops = await startOpsListener(
    '127.0.0.1',
    0,
    {
      metrics: () => Promise.resolve({ contentType: 'text/plain', text: '' }),
      readiness: () => gw.gateway.readiness(),
    },
    createLogger('silent'),
  );
  const url = `http://127.0.0.1:${ops.port}`;
  try {
    await waitFor(async () => (await readyz(url)).status === 200, {
      what: 'every check to pass',
      timeoutMs: 30_000,
    });
    worker.child.kill('SIGSTOP');
    const hung = await readyz(url);
    assert.equal(hung.status, 503, JSON.stringify(hung.body));
    assert.equal(hung.body.ready, false);
    assert.equal(hung.body.checks.broker_worker?.ok, false);
    assert.equal(typeof hung.body.checks.broker_worker?.error, 'string');
    // Only the hung dependency fails: the others were not held up by it.
    assert.equal(hung.body.checks.state_store?.ok, true);
    assert.equal(hung.body.checks.namespace_memory?.ok, true);
    worker.child.kill('SIGCONT');
    await waitFor(async () => (await readyz(url)).status === 200, {
      what: 'readiness to return once the worker runs again',
      timeoutMs: 30_000,
    });
  } finally {
    worker.child.kill('SIGCONT');
    await ops.close();
    await gw.close();
    await broker.close();
    await worker.stop();
  }
});
