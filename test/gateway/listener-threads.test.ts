import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { keyStorePath } from '../../gateway/server.ts';

const root = join(import.meta.dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test('GATEWAY_THREADS=3 serves one port from three uWS threads and stops cleanly on SIGTERM', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-threads-'));
  const store = new ApiKeyStore(keyStorePath(dataDir));
  const { key } = store.create('threads');
  store.close();
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'gateway/main.ts'], {
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
    for (let waited = 0; !output.includes('listener threads') && waited < 30_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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
