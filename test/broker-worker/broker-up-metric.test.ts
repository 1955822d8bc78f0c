/**
 * mcp_broker_up, the series McpBrokerDown alerts on, from a real worker process: 0 once the
 * worker's probe has found no broker at the configured address, and absent for a worker
 * with no broker configured (nothing there to be up or down). The 1 of a reachable broker
 * is checked on a full stack by test/deploy/metric-names.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkerStatus } from '../../shared/ipc/messages.ts';
import { freePort, waitFor } from '../support/harness.ts';
import { startConnectedWorker } from './support/worker-process.ts';

type MetricJson = { name: string; values: Array<{ value: number }> };

test('a worker whose broker does not answer reports mcp_broker_up 0, after its probe says so', async () => {
  // A free port with nothing listening: every connection is refused at once.
  const stack = await startConnectedWorker({
    BROKER_BOOTSTRAP_SERVERS: `127.0.0.1:${await freePort()}`,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
  try {
    await waitFor(
      async () => {
        const status = (await stack.client.call('status', {}, { timeoutMs: 2000 })) as WorkerStatus;
        return status.brokerReachable === false ? true : undefined;
      },
      { what: 'the probe to find no broker', timeoutMs: 20_000, intervalMs: 100 },
    );
    const metrics = (await stack.client.call('metrics', {}, { timeoutMs: 2000 })) as MetricJson[];
    const up = metrics.find((metric) => metric.name === 'mcp_broker_up');
    assert.ok(up, `no mcp_broker_up among ${metrics.map((m) => m.name).join(', ')}`);
    assert.deepEqual(
      up.values.map((v) => v.value),
      [0],
    );
  } finally {
    await stack.close();
  }
});

test('a worker with no broker configured has no mcp_broker_up series', async () => {
  const stack = await startConnectedWorker({ BROKER_BOOTSTRAP_SERVERS: '' });
  try {
    const status = (await stack.client.call('status', {}, { timeoutMs: 2000 })) as WorkerStatus;
    assert.equal(status.brokerConfigured, false);
    const metrics = (await stack.client.call('metrics', {}, { timeoutMs: 2000 })) as MetricJson[];
    assert.ok(metrics.some((metric) => metric.name === 'mcp_broker_ipc_queue_depth'));
    assert.equal(
      metrics.find((metric) => metric.name === 'mcp_broker_up'),
      undefined,
    );
  } finally {
    await stack.close();
  }
});
