/**
 * `npm run dev` keeps its key across restarts: each run calls devKey() on the real state
 * store in DATA_DIR; only a key the gateway would refuse (or none) gets replaced.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { DEV_KEY_FILE, devKey } from '../../scripts/dev-key.ts';
import { startTestGateway } from '../support/gateway.ts';

test('the dev key is minted once, reused by later runs, and replaced once revoked or lost', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dev-key-'));
  // What each `npm run dev` does: open the store, get the key, close the store.
  const run = async () => {
    const store = await openStateStore({ DATA_DIR: dataDir });
    try {
      const owner = await store.operatorAccount();
      return await devKey(store, dataDir, owner.id);
    } finally {
      await store.close();
    }
  };
  try {
    const first = await run();
    assert.equal(first.reused, false);
    assert.equal(first.replaced, 'missing');
    assert.equal(statSync(join(dataDir, DEV_KEY_FILE)).mode & 0o777, 0o600);

    const second = await run();
    assert.deepEqual([second.id, second.key, second.reused], [first.id, first.key, true]);

    // The gateway on this DATA_DIR admits the kept key.
    const gateway = await startTestGateway({ dataDir, env: { MEMORY_EMBEDDINGS: 'none' } });
    try {
      const answer = await fetch(`${gateway.url}/memory/mcp`, {
        method: 'POST',
        headers: {
          'x-api-key': second.key,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.notEqual(answer.status, 401);
    } finally {
      await gateway.close();
    }

    const store = await openStateStore({ DATA_DIR: dataDir });
    await store.revokeKey(first.id);
    await store.close();
    const third = await run();
    assert.equal(third.reused, false);
    assert.equal(third.replaced, 'revoked');
    assert.notEqual(third.key, first.key);
    assert.equal((await run()).key, third.key);

    await writeFile(join(dataDir, DEV_KEY_FILE), 'not json');
    const fourth = await run();
    assert.equal(fourth.reused, false);
    assert.notEqual(fourth.key, third.key);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
