/**
 * /readyz over real HTTP on the ops listener, with the state store in a real Postgres that
 * goes away mid-test, and with the gateway draining.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startValkey } from '../../dev/valkey/valkey.ts';
import { createLogger } from '../../gateway/logger.ts';
import { startOpsListener } from '../../gateway/ops/ops-server.ts';
import { clientFor, startWorker } from '../broker-worker/support/worker-process.ts';
import { startTestGateway } from '../support/gateway.ts';
import { freePort, waitFor } from '../support/harness.ts';
import { startTestPostgres } from '../support/postgres.ts';

interface Readiness {
  ready: boolean;
  draining: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
}

async function readyz(url: string): Promise<{ status: number; body: Readiness }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness };
}

test('readiness fails when the Postgres state store goes away, and while draining', async () => {
  const postgres = await startTestPostgres();
  // A worker with no broker settings still answers status: the link is what is checked.
  const worker = await startWorker({});
  const broker = clientFor(worker.address);
  const gw = await startTestGateway({ broker, env: { DATABASE_URL: postgres.url } });
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
  let postgresOpen = true;
  try {
    await waitFor(async () => (await readyz(url)).status === 200, {
      what: 'the worker link',
      timeoutMs: 30_000,
    });
    const ready = await readyz(url);
    assert.deepEqual(ready.body, {
      ready: true,
      draining: false,
      checks: { state_store: { ok: true }, broker_worker: { ok: true }, namespace_memory: { ok: true } },
    });

    await postgres.close();
    postgresOpen = false;
    await waitFor(async () => (await readyz(url)).status === 503, {
      what: 'the state store check to fail',
      timeoutMs: 30_000,
    });
    const failed = await readyz(url);
    assert.equal(failed.body.ready, false);
    assert.equal(failed.body.checks.state_store?.ok, false);
    assert.equal(typeof failed.body.checks.state_store?.error, 'string');
    assert.equal(failed.body.checks.broker_worker?.ok, true);
    // The memory store lives in the same Postgres: its namespace's health says so too.
    assert.equal(failed.body.checks.namespace_memory?.ok, false);
    assert.ok(!JSON.stringify(failed.body).includes(postgres.url), 'the database URL is not echoed');
  } finally {
    await ops.close();
    await gw.close().catch(() => {});
    await broker.close();
    await worker.stop();
    if (postgresOpen) await postgres.close();
  }
});

test('a draining gateway is not ready, with the same JSON naming every check', async () => {
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
      what: 'the worker link',
      timeoutMs: 30_000,
    });
    assert.equal(await gw.gateway.drain(5_000), true);
    const draining = await readyz(url);
    assert.equal(draining.status, 503);
    assert.deepEqual(draining.body, {
      ready: false,
      draining: true,
      checks: { state_store: { ok: true }, broker_worker: { ok: true }, namespace_memory: { ok: true } },
    });
  } finally {
    await ops.close();
    await gw.close();
    await broker.close();
    await worker.stop();
  }
});

test('with RATE_LIMIT_REDIS_URL, readiness names Redis and follows it going away and coming back', async () => {
  const port = await freePort();
  let valkey = await startValkey(port);
  const worker = await startWorker({});
  const broker = clientFor(worker.address);
  const gw = await startTestGateway({ broker, env: { RATE_LIMIT_REDIS_URL: valkey.url } });
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
    assert.deepEqual(Object.keys((await readyz(url)).body.checks).sort(), [
      'broker_worker',
      'namespace_memory',
      'redis',
      'state_store',
    ]);
    await valkey.stop();
    await waitFor(async () => (await readyz(url)).body.checks.redis?.ok === false, {
      what: 'the Redis check to fail',
      timeoutMs: 30_000,
    });
    assert.equal((await readyz(url)).status, 503);
    valkey = await startValkey(port);
    await waitFor(async () => (await readyz(url)).status === 200, {
      what: 'Redis to be seen again',
      timeoutMs: 30_000,
    });
  } finally {
    await ops.close();
    await gw.close();
    await broker.close();
    await worker.stop();
    await valkey.stop();
  }
});
