/**
 * `npm start` as an operator runs it: the real npm, the supervisor, a broker-worker and a
 * gateway process against the test Kafka. SIGTERM must stop the whole tree (no orphans,
 * port free, a second start works), a killed worker comes back by itself, and a poll in
 * flight at SIGTERM is answered instead of reset.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { clientFor } from '../broker-worker/support/worker-process.ts';
import { freePort, mintKey, portIsFree, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { commandLine, descendants, isAlive } from './support/processes.ts';

const root = join(import.meta.dirname, '..', '..');
let dataDir: string;
let port: number;
let apiKey: string;
let env: NodeJS.ProcessEnv;

interface Started {
  npm: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

function npmStart(): Started {
  const npm = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  npm.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return { npm, output, exited };
}

function workerPid(started: Started): number | undefined {
  return descendants(started.npm.pid!).find((pid) => commandLine(pid).includes('dist/broker-worker/main.js'));
}

async function mcp(): Promise<Client> {
  const client = new Client({ name: 'npm-start-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/event/mcp`), {
      requestInit: { headers: { 'X-API-Key': apiKey } },
    }),
  );
  return client;
}

async function workerReachable(client: Client): Promise<string | undefined> {
  const result = await client.callTool({ name: 'event_capabilities', arguments: {} });
  const caps = result.structuredContent as { details: { worker: { reachable: boolean } } };
  return caps.details.worker.reachable ? 'reachable' : undefined;
}

/** Up: /healthz answers and the gateway reaches the worker. */
async function waitUp(started: Started): Promise<void> {
  await waitFor(
    async () => {
      if (started.npm.exitCode !== null) throw new Error(`npm start exited:\n${started.output.join('')}`);
      return fetch(`http://127.0.0.1:${port}/healthz`).then(
        (res) => res.ok,
        () => undefined,
      );
    },
    { what: `npm start to serve\n${started.output.join('')}`, timeoutMs: 60_000, intervalMs: 100 },
  );
  const client = await mcp();
  try {
    await waitFor(() => workerReachable(client), {
      what: 'the worker to be reachable',
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  } finally {
    await client.close();
  }
}

async function stopAndCheck(started: Started): Promise<void> {
  const tree = descendants(started.npm.pid!);
  assert.ok(tree.length >= 3, `expected the supervisor, worker and gateway under npm, saw ${tree.length}`);
  started.npm.kill('SIGTERM');
  assert.equal(await started.exited, 0, started.output.join(''));
  await waitFor(() => tree.every((pid) => !isAlive(pid)) || undefined, {
    what: 'every process of the tree to end',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  assert.equal(await portIsFree(port), true);
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
  port = await freePort();
  env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    BROKER_BOOTSTRAP_SERVERS: testKafka().plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_CONSUMER_GROUP: 'npm-start-group',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  };
  apiKey = mintKey(dataDir, 'npm-start', 'test').key;
});
after(() => rm(dataDir, { recursive: true, force: true }));

test('npm start restarts a killed worker, answers a poll in flight at SIGTERM, stops its whole tree, and starts again', {
  timeout: 240_000,
}, async () => {
  const first = npmStart();
  try {
    await waitUp(first);

    // kill -9 of the worker: the supervisor starts a new one and the gateway reconnects.
    const before = workerPid(first)!;
    assert.ok(before);
    process.kill(before, 'SIGKILL');
    const again = await waitFor(
      () => {
        const pid = workerPid(first);
        return pid !== undefined && pid !== before ? pid : undefined;
      },
      { what: 'a new worker process', timeoutMs: 60_000, intervalMs: 100 },
    );
    assert.notEqual(again, before);
    await waitUp(first);
    assert.match(first.output.join(''), /broker-worker exited \(signal SIGKILL\); restarting it/);

    // A long poll in flight when SIGTERM arrives gets an answer, not a reset.
    const client = await mcp();
    const topic = `drain-${Date.now()}`;
    const created = await client.callTool({
      name: 'event_create_topic',
      arguments: { topic, partitions: 1, replication_factor: 1 },
    });
    assert.notEqual(created.isError, true, JSON.stringify(created.content));
    const poll = client.callTool(
      { name: 'event_consume', arguments: { topic, timeout_ms: 30_000 } },
      undefined,
      { timeout: 120_000 },
    );
    // The poll is in flight once the worker holds a consumer for it (asked over the worker's own socket).
    const ipc = clientFor(`unix:${join(dataDir, 'broker-worker.sock')}`);
    try {
      await waitFor(
        async () => {
          const status = await ipc.call('status', {}, { timeoutMs: 5000 }).catch(() => undefined);
          return (status?.liveConsumers ?? 0) > 0 || undefined;
        },
        { what: 'the poll to reach the worker', timeoutMs: 60_000, intervalMs: 100 },
      );
    } finally {
      await ipc.close();
    }
    await stopAndCheck(first);
    const answered = await poll;
    assert.notEqual(answered.isError, true, JSON.stringify(answered.content));
    const drained = answered.structuredContent as { count: number; hint?: string };
    assert.equal(drained.count, 0);
    assert.match(drained.hint ?? '', /shutting down, so this poll answered early/);
  } finally {
    first.npm.kill('SIGKILL');
  }

  // Nothing was left behind: a second start gets the port and serves.
  const second = npmStart();
  try {
    await waitUp(second);
    await stopAndCheck(second);
  } finally {
    second.npm.kill('SIGKILL');
  }
});
