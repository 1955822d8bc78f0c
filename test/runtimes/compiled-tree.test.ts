/**
 * The production tree on whatever Node runs this file (npm test runs it on 20, 22 and 24,
 * with the same node_modules): `node bin/gateway.mjs` and `node bin/broker-worker.mjs`, as the
 * Procfile starts them, run the compiled dist/ with no tsx loaded, and the gateway serves all
 * five namespaces. The broker worker is pointed at a port nothing listens on: this checks
 * that it loads and comes up, not Kafka traffic (test/scripts covers that on Node 20).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, mintKey, waitFor } from '../support/harness.ts';

const root = join(import.meta.dirname, '..', '..');
let dataDir: string;
let port: number;
let apiKey: string;
const children: ChildProcess[] = [];
const output: string[] = [];

function procfileLine(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  children.push(child);
  return child;
}

function ready(child: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.on('message', (message) => message === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output.join('')}`)));
  });
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'compiled-tree-'));
  port = await freePort();
  apiKey = mintKey(dataDir, 'compiled', 'test').key;
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

test(`the compiled gateway and broker worker start on Node ${process.versions.node} and serve all five namespaces`, {
  timeout: 120_000,
}, async () => {
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    BROKER_BOOTSTRAP_SERVERS: `127.0.0.1:${await freePort()}`,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  };
  const worker = procfileLine('bin/broker-worker.mjs', env);
  const gateway = procfileLine('bin/gateway.mjs', env);
  await Promise.all([ready(worker, 'broker-worker'), ready(gateway, 'gateway')]);

  for (const child of [worker, gateway]) {
    // No TypeScript loader in the production tree: tsx would sit on the command line, or as
    // the `--import` the process inherited in its environment.
    const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0').join(' ');
    assert.doesNotMatch(cmdline, /tsx|\.ts\b/);
    const environ = await readFile(`/proc/${child.pid}/environ`, 'utf8');
    assert.doesNotMatch(environ, /NODE_OPTIONS=[^\0]*tsx/);
  }

  for (const namespace of ['event', 'gsc', 'memory', 'producthunt', 'skills']) {
    const body = await waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/${namespace}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'x-api-key': apiKey,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
        return res.ok ? ((await res.json()) as { result: { tools: { name: string }[] } }) : undefined;
      },
      { what: `tools/list on /${namespace}/mcp`, timeoutMs: 60_000, intervalMs: 100 },
    );
    assert.ok(body.result.tools.length > 0, namespace);
    assert.ok(
      body.result.tools.every((tool) => tool.name.startsWith(`${namespace}_`) || namespace !== 'event'),
      namespace,
    );
  }
});
