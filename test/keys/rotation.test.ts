/**
 * `npm run keys -- rotate` against a real gateway over HTTP: clients keep calling with the
 * old secret while the key rotates, then switch to the new one, and not one request fails;
 * once the grace period and the gateway's key cache (API_KEY_CACHE_TTL_MS) are over, the
 * old secret gets 401.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { startTestGateway } from '../support/gateway.ts';
import { elapse, waitFor } from '../support/harness.ts';

const CACHE_TTL_MS = 1_000;
const GRACE_S = 6;

function toolsList(url: string, key: string): Promise<Response> {
  return fetch(`${url}/event/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'x-api-key': key,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

test('rotate with a grace period: no failed request while clients move over; the old secret then gets 401', async () => {
  const gw = await startTestGateway({ env: { API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) } });
  const env = { DATA_DIR: gw.dataDir };
  try {
    const created = await runCli('keys', ['create', '--label', 'rolling', '--json'], { env });
    assert.equal(created.code, 0, created.stderr);
    const { id, key: oldKey } = JSON.parse(created.stdout) as { id: string; key: string };

    // Clients that call without pause, each with whatever secret it currently holds.
    let secret = oldKey;
    let running = true;
    const failures: string[] = [];
    const calls = { old: 0, new: 0 };
    const client = async () => {
      while (running) {
        const using = secret;
        const response = await toolsList(gw.url, using);
        const body = await response.text();
        if (response.status !== 200) failures.push(`${response.status} ${body.slice(0, 200)}`);
        calls[using === oldKey ? 'old' : 'new'] += 1;
      }
    };
    const clients = [client(), client(), client()];
    await waitFor(() => calls.old > 0, { what: 'the clients to call with the old secret' });

    const rotated = await runCli('keys', ['rotate', id, '--grace', `${GRACE_S}s`, '--json'], { env });
    assert.equal(rotated.code, 0, rotated.stderr);
    const rotation = JSON.parse(rotated.stdout) as {
      id: string;
      key: string;
      previousSecretValidUntil: string;
    };
    const oldCallsAtRotation = calls.old;
    assert.equal(rotation.id, id, 'same key id');
    assert.notEqual(rotation.key, oldKey);
    const graceEnds = Date.parse(rotation.previousSecretValidUntil);
    assert.ok(Math.abs(graceEnds - (Date.now() + GRACE_S * 1000)) < 2_000);

    // Past the cache TTL, so the old secret was looked up again after the rotation.
    // Elapsed time is the point: the cache TTL must pass.
    await elapse(CACHE_TTL_MS + 500);
    const oldCallsAfterRotation = calls.old - oldCallsAtRotation;
    secret = rotation.key;
    await waitFor(() => calls.new > 10, {
      what: () => `more than 10 calls with the new secret (${JSON.stringify(calls)})`,
    });
    running = false;
    await Promise.all(clients);
    assert.deepEqual(failures, [], 'no request failed during the rotation');
    assert.ok(oldCallsAfterRotation > 10 && calls.new > 10, JSON.stringify(calls));

    // Still inside the grace period, the old secret works, from the store as from the cache.
    assert.ok(Date.now() < graceEnds - 300, 'the test reached this point within the grace period');
    assert.equal((await toolsList(gw.url, oldKey)).status, 200);

    // Elapsed time is the point: the grace period and then the cache TTL must pass.
    await elapse(graceEnds + CACHE_TTL_MS + 200 - Date.now());
    const refused = await toolsList(gw.url, oldKey);
    assert.equal(refused.status, 401);
    assert.match(await refused.text(), /replaced by rotation/);
    assert.equal((await toolsList(gw.url, rotation.key)).status, 200, 'the new secret keeps working');
  } finally {
    await gw.close();
  }
});

test('rotate or revoke of an unknown key says so, exits 1 and changes nothing; a revoked key cannot rotate', async () => {
  const gw = await startTestGateway();
  const env = { DATA_DIR: gw.dataDir };
  try {
    const before = (await runCli('keys', ['list', '--json'], { env })).stdout;
    for (const args of [
      ['rotate', 'key_nothere', '--grace', '60s'],
      ['revoke', 'key_nothere'],
    ]) {
      const result = await runCli('keys', args, { env });
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
      assert.match(result.stderr, /no key with id key_nothere; nothing was changed/);
    }
    assert.equal((await runCli('keys', ['list', '--json'], { env })).stdout, before);

    for (const grace of ['60', '5d', '-1s', '1.5m', '200h']) {
      const bad = await runCli('keys', ['rotate', gw.apiKeyId, '--grace', grace], { env });
      assert.equal(bad.code, 2, `--grace ${grace}`);
      assert.match(bad.stderr, /--grace: /);
      assert.match(bad.stderr, /Usage: npm run keys -- rotate/);
    }
    for (const grace of ['30s', '15m', '2h']) {
      const ok = await runCli('keys', ['rotate', gw.apiKeyId, '--grace', grace], { env });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, new RegExp(`keeps working until .* \\(${grace}\\)`));
    }

    assert.equal((await runCli('keys', ['revoke', gw.apiKeyId], { env })).code, 0);
    const revoked = await runCli('keys', ['rotate', gw.apiKeyId], { env });
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /was revoked at .* and cannot be rotated; nothing was changed/);
    assert.equal((await toolsList(gw.url, gw.apiKey)).status, 401);
  } finally {
    await gw.close();
  }
});
