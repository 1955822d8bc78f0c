/**
 * `npm run bench -- footprint`: the production tree as the Procfile starts it (`node
 * bin/broker-worker.mjs`, `node bin/gateway.mjs`, compiled, no npm, no supervisor, no tsx)
 * against a local Kafka, with the RSS of each process and their sum at three moments: idle,
 * after 20,000 `tools/list` calls, and after the first memory use (one memory_write and
 * one memory_search, which load the embedder). Targets from issue 25 are printed beside.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startPrivateKafka } from '../dev/kafka/private-kafka.ts';
import { ApiKeyStore } from '../gateway/keys/store.ts';
import { keyStorePath } from '../gateway/server.ts';
import { benchRoot, procfileArgs, rssMb } from './child.ts';
import { machineInfo } from './machine.ts';
import { callTool } from './mcp-call.ts';

const REQUESTS = 20_000;
/** Long enough for start-up garbage to be collected and lazy timers to have fired once. */
const SETTLE_MS = 10_000;
const TARGETS = { gateway: 70, worker: 50, tree: 120, growth: 0.15 };

interface Sample {
  gateway: number;
  worker: number;
  tree: number;
}

async function startProcfileLine(name: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const script = await procfileArgs(name);
  const child = spawn(process.execPath, script, {
    cwd: benchRoot,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (message) => message === 'ready' && resolve(child));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
  });
}

async function sample(gateway: ChildProcess, worker: ChildProcess): Promise<Sample> {
  const [g, w] = await Promise.all([rssMb(gateway.pid!), rssMb(worker.pid!)]);
  return { gateway: g, worker: w, tree: Math.round((g + w) * 10) / 10 };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

export async function runFootprintSection(log: (line: string) => void): Promise<void> {
  log('footprint: starting a local Kafka and the Procfile tree (its broker-worker and gateway lines)');
  const broker = await startPrivateKafka(0);
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-footprint-'));
  const children: ChildProcess[] = [];
  try {
    const store = new ApiKeyStore(keyStorePath(dataDir));
    const key = (() => {
      try {
        return store.create('footprint', 'bench').key;
      } finally {
        store.close();
      }
    })();
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(18_000 + (process.pid % 1000)),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      BROKER_BOOTSTRAP_SERVERS: broker.kafka.plaintext,
      BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    };
    const worker = await startProcfileLine('broker-worker', env);
    children.push(worker);
    const gateway = await startProcfileLine('gateway', env);
    children.push(gateway);
    const base = `http://127.0.0.1:${env.PORT}`;

    await settle();
    const idle = await sample(gateway, worker);
    log(`idle: ${JSON.stringify(idle)}`);

    const result = await autocannon({
      url: `${base}/event/mcp`,
      method: 'POST',
      connections: 16,
      amount: REQUESTS,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': key,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`tools/list: ${result.non2xx} non-2xx, ${result.errors} errors`);
    await settle();
    const loaded = await sample(gateway, worker);
    // Throughput beside memory: a heap setting that saves RSS must not cost request rate.
    const requestsPerSecond = Math.round(result.requests.average);
    log(`after ${REQUESTS} tools/list (${requestsPerSecond} req/s): ${JSON.stringify(loaded)}`);

    const memory = `${base}/memory/mcp`;
    await callTool(memory, key, 'memory_write', { content: 'The footprint bench wrote this memory.' });
    await callTool(memory, key, 'memory_search', { query: 'what did the footprint bench write?' });
    await settle();
    const afterMemory = await sample(gateway, worker);
    log(`after the first memory use: ${JSON.stringify(afterMemory)}`);

    const growth = Math.round(((loaded.tree - idle.tree) / idle.tree) * 1000) / 1000;
    const report = {
      machine: machineInfo(),
      node: process.version,
      measuredAt: new Date().toISOString(),
      unit: 'MiB (VmRSS)',
      idle,
      afterRequests: { requests: REQUESTS, requestsPerSecond, ...loaded, growth },
      afterFirstMemoryUse: afterMemory,
      targets: TARGETS,
      met: {
        gatewayIdle: idle.gateway <= TARGETS.gateway,
        workerIdle: idle.worker <= TARGETS.worker,
        treeIdle: idle.tree <= TARGETS.tree,
        growth: growth <= TARGETS.growth,
      },
    };
    console.table({
      idle: { ...idle },
      [`after ${REQUESTS} tools/list`]: { ...loaded },
      'after first memory use': { ...afterMemory },
      target: { gateway: TARGETS.gateway, worker: TARGETS.worker, tree: TARGETS.tree },
    });
    console.log(`growth after ${REQUESTS} requests: ${(growth * 100).toFixed(1)}% (target ≤ 15%)`);
    await writeFile(
      join(benchRoot, 'bench', 'results', 'footprint.json'),
      `${JSON.stringify(report, null, 2)}\n`,
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve))),
      ),
    );
    await rm(dataDir, { recursive: true, force: true });
    await broker.cleanup();
  }
}
