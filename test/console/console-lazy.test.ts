/**
 * The console's pages load on the first /console request: a gateway serving only MCP holds
 * none of their code (the module witness records what loads), and two first requests at once
 * are both answered by the pages once they load.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey } from '../support/harness.ts';
import { BASE } from '../support/raw-mcp.ts';
import { moduleWitness } from '../support/witness.ts';

test('the console pages load on the first /console request, not before', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-console-lazy-'));
  const { env, loaded } = moduleWitness(dataDir, '/console/');
  const { key } = mintKey(dataDir, 'console-lazy');
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    ...env,
  });
  try {
    const response = await fetch(`${gateway.url}/event/mcp`, {
      method: 'POST',
      headers: { ...BASE, 'x-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const before = await loaded();
    assert.ok(
      before.some((line) => line.includes('/console/oidc-settings.')),
      'the witness sees the sign-on settings, read at start',
    );
    assert.deepEqual(
      before.filter((line) => /\/console\/(routes|kit|html|sign-in-routes)\./.test(line)),
      [],
      'no console page code after serving MCP',
    );

    const pages = await Promise.all(
      [1, 2].map(async () => {
        const page = await fetch(`${gateway.url}/console/sign-in`);
        return { status: page.status, text: await page.text() };
      }),
    );
    for (const page of pages) {
      assert.equal(page.status, 200);
      assert.match(page.text, /<form/);
    }
    assert.ok(
      (await loaded()).some((line) => line.includes('/console/routes.')),
      'the first /console request loaded the pages',
    );
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
