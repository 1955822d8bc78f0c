/**
 * `npm run bench -- footprint`: the production tree as the Procfile starts it (`node
 * bin/broker-worker.mjs`, `node bin/gateway.mjs`, compiled, no npm, no supervisor, no tsx)
 * against a local Kafka, with the RSS of each process and their sum at three moments: idle,
 * after 20,000 `tools/list` calls, and after the first memory use (one memory_write and
 * one memory_search, which load the embedder). Targets from issue 25 are printed beside,
 * with a baseline beside each process: the libraries it requires, alone in a bare process,
 * and issue 37's: the idle gateway within 1.1× of its baseline. A namespace is compiled by
 * its first request (decision 0190), so the first `tools/list` of each namespace is timed
 * beside its second: what the lazy load costs the first caller.
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
/**
 * Long enough for start-up garbage to be collected and lazy timers to have fired once. V8's
 * memory reducer collects an idle process's start-up garbage in full GCs about 8 s apart: a
 * gateway's RSS steps down at about 8 and 17 s after its start, a floor's once at about 9 s
 * (2026-11-29). After 10 s the gateway was read before its second step and the floors after
 * theirs; 20 s reads every process settled.
 */
const SETTLE_MS = 20_000;
const READINGS = 5;
const TARGETS = { gateway: 70, worker: 50, tree: 120, growth: 0.15, gatewayToFloor: 1.1 };
const NAMESPACES = ['event', 'gsc', 'memory', 'producthunt', 'skills'];

interface Sample {
  gateway: number;
  worker: number;
  tree: number;
  /** The baselines: each process's required libraries in a bare process (servers/*-floor.mjs). */
  gatewayFloor: number;
  workerFloor: number;
  treeFloor: number;
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

/** A baseline process (bench/servers/*-floor.mjs), started beside the tree it is compared with. */
async function startFloor(file: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(benchRoot, 'bench', 'servers', file)], {
    cwd: benchRoot,
    env: { ...env, FLOOR_SOCKET: join(env.DATA_DIR!, 'worker-floor.sock') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (message) => message === 'ready' && resolve(child));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
  });
}

/** One reading moves by a few MiB with where garbage collection stands, so each moment is the median of five readings a second apart. */
interface Tree {
  gateway: ChildProcess;
  worker: ChildProcess;
  gatewayFloor: ChildProcess;
  workerFloor: ChildProcess;
}

async function sample(tree: Tree): Promise<Sample> {
  const processes = [tree.gateway, tree.worker, tree.gatewayFloor, tree.workerFloor];
  const readings: number[][] = [];
  for (let i = 0; i < READINGS; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    readings.push(await Promise.all(processes.map((child) => rssMb(child.pid!))));
  }
  const median = (column: number) => readings.map((r) => r[column]!).sort((a, b) => a - b)[READINGS >> 1]!;
  const [g, w, gf, wf] = [median(0), median(1), median(2), median(3)];
  const sum = (a: number, b: number) => Math.round((a + b) * 10) / 10;
  return {
    gateway: g,
    worker: w,
    tree: sum(g, w),
    gatewayFloor: gf,
    workerFloor: wf,
    treeFloor: sum(gf, wf),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** Milliseconds of one tools/list, request to last byte. */
async function timedList(url: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"tools":['))
    throw new Error(`${url}: tools/list answered ${response.status}`);
  return Math.round((performance.now() - started) * 100) / 100;
}

/** Each namespace's first tools/list (which compiles it) and its second, in ms. */
async function firstRequests(
  base: string,
  key: string,
): Promise<Record<string, { firstMs: number; secondMs: number }>> {
  const timings: Record<string, { firstMs: number; secondMs: number }> = {};
  for (const namespace of NAMESPACES) {
    const url = `${base}/${namespace}/mcp`;
    const firstMs = await timedList(url, key);
    timings[namespace] = { firstMs, secondMs: await timedList(url, key) };
  }
  return timings;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

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
    const gatewayFloor = await startFloor('gateway-floor.mjs', env);
    children.push(gatewayFloor);
    const workerFloor = await startFloor('worker-floor.mjs', env);
    children.push(workerFloor);
    const tree: Tree = { gateway, worker, gatewayFloor, workerFloor };
    const base = `http://127.0.0.1:${env.PORT}`;

    await settle();
    const idle = await sample(tree);
    log(`idle: ${JSON.stringify(idle)}`);
    const firstToolsList = await firstRequests(base, key);
    log(`first and second tools/list of each namespace (ms): ${JSON.stringify(firstToolsList)}`);

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
    const loaded = await sample(tree);
    // Throughput beside memory: a heap setting that saves RSS must not cost request rate.
    const requestsPerSecond = Math.round(result.requests.average);
    log(`after ${REQUESTS} tools/list (${requestsPerSecond} req/s): ${JSON.stringify(loaded)}`);

    const memory = `${base}/memory/mcp`;
    await callTool(memory, key, 'memory_write', { content: 'The footprint bench wrote this memory.' });
    await callTool(memory, key, 'memory_search', { query: 'what did the footprint bench write?' });
    await settle();
    const afterMemory = await sample(tree);
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
      firstToolsList,
      targets: TARGETS,
      // What the project's own code adds to the libraries the design requires of each process.
      aboveFloor: {
        gateway: Math.round((idle.gateway - idle.gatewayFloor) * 10) / 10,
        worker: Math.round((idle.worker - idle.workerFloor) * 10) / 10,
      },
      toFloor: {
        gateway: ratio(idle.gateway, idle.gatewayFloor),
        worker: ratio(idle.worker, idle.workerFloor),
      },
      met: {
        gatewayToFloor: ratio(idle.gateway, idle.gatewayFloor) <= TARGETS.gatewayToFloor,
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
    console.log(
      `idle against the required libraries alone in bare processes: gateway ${idle.gateway} / ${idle.gatewayFloor}, ` +
        `worker ${idle.worker} / ${idle.workerFloor}, tree ${idle.tree} / ${idle.treeFloor} MiB; ` +
        `gateway ${ratio(idle.gateway, idle.gatewayFloor)}× its floor (target ≤ ${TARGETS.gatewayToFloor}×)`,
    );
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
