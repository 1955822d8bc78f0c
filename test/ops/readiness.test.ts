/**
 * /readyz over real HTTP on the ops listener, with the state store in a native Postgres of its own that
 * goes away mid-test, and with the gateway draining.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startValkey } from '../../dev/valkey/valkey.ts';
import { freePort, waitFor } from '../support/harness.ts';
import { startOwnPostgres } from '../support/own-postgres.ts';
import { startReadinessStack } from './support/readiness-stack.ts';

test('readiness fails when the Postgres state store goes away, and while draining', async () => {
  const postgres = await startOwnPostgres();
  const stack = await startReadinessStack({ DATABASE_URL: postgres.url });
  let postgresOpen = true;
  try {
    await stack.untilReady('the worker link');
    const ready = await stack.readyz();
    assert.deepEqual(ready.body, {
      ready: true,
      draining: false,
      checks: { state_store: { ok: true }, broker_worker: { ok: true }, namespace_memory: { ok: true } },
    });

    await postgres.close();
    postgresOpen = false;
    await waitFor(async () => (await stack.readyz()).status === 503, {
      what: 'the state store check to fail',
      timeoutMs: 30_000,
    });
    const failed = await stack.readyz();
    assert.equal(failed.body.ready, false);
    assert.equal(failed.body.checks.state_store?.ok, false);
    assert.equal(typeof failed.body.checks.state_store?.error, 'string');
    assert.equal(failed.body.checks.broker_worker?.ok, true);
    // The memory store lives in the same Postgres: its namespace's health says so too.
    assert.equal(failed.body.checks.namespace_memory?.ok, false);
    assert.ok(!JSON.stringify(failed.body).includes(postgres.url), 'the database URL is not echoed');
  } finally {
    await stack.close();
    if (postgresOpen) await postgres.close();
  }
});

test('a draining gateway is not ready, with the same JSON naming every check', async () => {
  const stack = await startReadinessStack();
  try {
    await stack.untilReady('the worker link');
    assert.equal(await stack.gw.gateway.drain(5_000), true);
    const draining = await stack.readyz();
    assert.equal(draining.status, 503);
    assert.deepEqual(draining.body, {
      ready: false,
      draining: true,
      checks: { state_store: { ok: true }, broker_worker: { ok: true }, namespace_memory: { ok: true } },
    });
  } finally {
    await stack.close();
  }
});

for (const onStoreError of ['deny', 'allow'] as const) {
  // Under deny every rate-limited call is refused while Redis is away, so the gateway leaves its
  // load balancer; under allow it still serves, so Redis is reported (advisory) but the
  // gateway stays ready: every gateway of a fleet shares that Redis and would leave at once.
  test(`with RATE_LIMIT_REDIS_URL and ${onStoreError}, readiness names Redis and follows it going away and coming back`, async () => {
    const port = await freePort();
    let valkey = await startValkey(port);
    const stack = await startReadinessStack({
      RATE_LIMIT_REDIS_URL: valkey.url,
      RATE_LIMIT_ON_STORE_ERROR: onStoreError,
    });
    try {
      await stack.untilReady('every check to pass');
      assert.deepEqual(Object.keys((await stack.readyz()).body.checks).sort(), [
        'broker_worker',
        'namespace_memory',
        'redis',
        'state_store',
      ]);
      await valkey.stop();
      await waitFor(async () => (await stack.readyz()).body.checks.redis?.ok === false, {
        what: 'the Redis check to fail',
        timeoutMs: 30_000,
      });
      const away = await stack.readyz();
      if (onStoreError === 'deny') {
        assert.equal(away.status, 503);
        assert.equal(away.body.ready, false);
        assert.equal(away.body.checks.redis?.advisory, undefined);
      } else {
        assert.equal(away.status, 200);
        assert.equal(away.body.ready, true);
        assert.equal(away.body.checks.redis?.advisory, true);
        assert.match(String(away.body.checks.redis?.error), /./);
      }
      valkey = await startValkey(port);
      await waitFor(async () => (await stack.readyz()).body.checks.redis?.ok === true, {
        what: 'Redis to be seen again',
        timeoutMs: 30_000,
      });
      assert.equal((await stack.readyz()).status, 200);
    } finally {
      await stack.close();
      await valkey.stop();
    }
  });
}
