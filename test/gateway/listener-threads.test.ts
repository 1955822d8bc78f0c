import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compiledEntry } from '../support/compiled.ts';
import { freePort, mintKey, waitFor } from '../support/harness.ts';

const root = join(import.meta.dirname, '../..');

test('GATEWAY_THREADS=3 serves one port from three uWS threads and stops cleanly on SIGTERM', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-threads-'));
  const { key } = mintKey(dataDir, 'threads');
  const port = await freePort();
  const child = spawn(process.execPath, [compiledEntry('gateway/main.ts')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), GATEWAY_THREADS: '3', HTTP_ENGINE: 'uws' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitFor(() => output.includes('listener threads'), {
      what: () => `the gateway to log its listener threads; it printed:\n${output}`,
      // Three threads each compile the gateway under tsx: slow on a loaded two-core machine.
      timeoutMs: 90_000,
    });
    assert.match(output, /serving from 3 listener threads/);
    const listening = output.split('\n').filter((line) => line.includes('"gateway listening'));
    assert.equal(listening.length, 3, output);

    for (let i = 0; i < 30; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/event/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, connection: 'close' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
      });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { result: { tools: unknown[] } };
      assert.equal(body.result.tools.length, 6);
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    assert.doesNotMatch(output, /Assertion failed|open handles/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});
