/**
 * `npm test`: the build, then every test file under node's test runner with one private local
 * Kafka for the whole run, beside the static checks (tsc, biome), then the storage and HTTP
 * suites (no Kafka) again under each other supported Node (22, 24: fetched into .cache on
 * first use).
 * Kafka starts only when a selected file needs it (see test/support/test-needs.ts), so
 * `npm test -- memory` runs without Java; one native Postgres (each test file its own
 * database) likewise only for files that reach test/support/postgres.ts. Files that need a
 * three-broker cluster (they reach
 * test/support/kafka-cluster-env.ts) run afterwards, one at a time, on a cluster started only
 * then, so the two never hold memory and cores together. Brokers are stopped even when tests
 * fail or the run is interrupted, and so is Postgres: no server outlives the suite.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PRIVATE_CLUSTER, startLocalKafka, stopLocalKafka } from '../dev/kafka/local-kafka.ts';
import { ensureNode, PINNED_RUNTIMES, type RuntimeMajor } from '../dev/node/runtimes.ts';
import { testKafkaClusterEnv } from './support/kafka-cluster-env.ts';
import { testKafkaEnv } from './support/kafka-env.ts';
import { setUpMiniLm } from './support/minilm.ts';
import { startRunPostgres } from './support/run-postgres.ts';
import { testNeeds } from './support/test-needs.ts';

const root = join(import.meta.dirname, '..');

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function testFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await testFiles(path)));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found.sort();
}

async function main(): Promise<number> {
  const filter = process.argv.slice(2);
  let files = await testFiles(join(root, 'test'));
  if (filter.length > 0) files = files.filter((f) => filter.some((part) => f.includes(part)));
  if (files.length === 0) {
    console.error('no test files matched');
    return 1;
  }
  const needs = await testNeeds(root, files);
  // What a fresh clone downloads (the default embedder's model, fetched into .cache/models as a
  // first start would; Node 22 and 24) waits on the network, not the CPU, so it starts first.
  // Each promise is awaited below, where its result is needed.
  const miniLm = needs.minilm.length > 0 ? settle(setUpMiniLm()) : undefined;
  const runtimes = otherRuntimeFiles(files).length > 0 ? fetchOtherRuntimes() : undefined;
  // The process tests (test/scripts) run the compiled tree as operators do.
  // initdb and the server's start take a core for a few seconds: beside the build, not after it.
  const postgres = settle(startRunPostgres(needs.postgres));
  if ((await run(process.execPath, ['scripts/build.mjs'])) !== 0) {
    await unwrap(postgres).then((server) => server.stop());
    return 1;
  }
  // tsc checks on one thread, which left the second core idle for its whole run: the type and
  // lint checks now run beside the tests, and a failure there fails the run all the same.
  const checks = filter.length === 0 ? staticChecks() : Promise.resolve(0);
  if (miniLm) await unwrap(miniLm);
  const server = await unwrap(postgres);
  let failed: number;
  try {
    failed = await runSuites(files, needs, runtimes, server.env);
  } finally {
    await server.stop();
  }
  const checksFailed = await checks;
  if (checksFailed)
    console.error('[run] static checks failed (tsc --noEmit, biome check .): see their output above');
  return failed || checksFailed;
}

/** The main pass, then the three-broker files, then the other runtimes, all beside the run's Postgres. */
async function runSuites(
  files: string[],
  needs: Awaited<ReturnType<typeof testNeeds>>,
  runtimes: Map<RuntimeMajor, Settled<string>> | undefined,
  postgresEnv: Record<string, string>,
): Promise<number> {
  // Three files at once on two cores: a file waiting on Kafka (a group join, a rebalance
  // delay, a grace period) leaves its core to the third.
  const clusterFiles = new Set(needs.kafkaCluster);
  const mainFiles = files.filter((file) => !clusterFiles.has(file));
  const mainFailed =
    mainFiles.length === 0
      ? 0
      : await withKafkaIfNeeded(needs.kafka, postgresEnv, (env) =>
          run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=3', ...mainFiles], env),
        );
  // One at a time: these files kill and restart the cluster's brokers.
  const clusterFailed = await withKafkaClusterIfNeeded(needs.kafkaCluster, postgresEnv, (env) =>
    run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...needs.kafkaCluster], env),
  );
  const otherFailed = await otherRuntimes(files, runtimes, { ...cleanEnv(), ...postgresEnv });
  return mainFailed || clusterFailed || otherFailed;
}

/** `tsc --noEmit` and `biome check .`, both run even when the first fails, so one run reports both. */
async function staticChecks(): Promise<number> {
  const types = await run('npx', ['tsc', '--noEmit']);
  const lint = await run('npx', ['biome', 'check', '.']);
  return types || lint;
}

type Settled<T> = Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;

/** A promise awaited later: its failure is kept for that moment, not reported as unhandled. */
function settle<T>(promise: Promise<T>): Settled<T> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

async function unwrap<T>(settled: Settled<T>): Promise<T> {
  const result = await settled;
  if (!result.ok) throw result.error;
  return result.value;
}

/**
 * The environment without the runner's TEST_KAFKA_* and TEST_POSTGRES_* variables: never
 * inherited, so a file that needs a server but was not seen to fails on a clear error, not
 * on a stale address.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('TEST_KAFKA_') && !name.startsWith('TEST_POSTGRES_'),
    ),
  );
}

/**
 * Runs the tests beside brokers started for them, stopped afterwards whatever happens
 * (an interrupt included).
 */
async function withBrokers(
  dataDirPrefix: string,
  start: (dataDir: string) => Promise<{ env: Record<string, string>; stop(): Promise<void> }>,
  extraEnv: Record<string, string>,
  tests: (env: NodeJS.ProcessEnv) => Promise<number>,
): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), dataDirPrefix));
  let started: { env: Record<string, string>; stop(): Promise<void> } | undefined;
  const stopAll = async () => {
    // By data dir, not by handle: a test may have restarted a broker the handle never knew.
    await started?.stop();
    await stopLocalKafka(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  };
  const onSignal = () => {
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    started = await start(dataDir);
    return await tests({ ...cleanEnv(), ...extraEnv, ...started.env });
  } finally {
    await stopAll();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * Runs the tests with the run's private broker when some file needs it, else without one.
 * The TEST_KAFKA_* variables belong to the runner: never inherited, so a file that needs
 * Kafka but was not seen to fails on testKafka()'s clear error, not on a stale address.
 */
async function withKafkaIfNeeded(
  kafkaFiles: string[],
  postgresEnv: Record<string, string>,
  tests: (env: NodeJS.ProcessEnv) => Promise<number>,
): Promise<number> {
  if (kafkaFiles.length === 0) {
    console.log('[run] no selected test file uses test/support/kafka-env.ts: no Kafka for this run');
    return tests({ ...cleanEnv(), ...postgresEnv, TEST_KAFKA_NOT_STARTED: '1' });
  }
  console.log(`[run] ${kafkaFiles.length} selected test files use Kafka: starting a private broker`);
  return withBrokers(
    'mcp-gw-test-kafka-',
    async (dataDir) => {
      const kafka = await startLocalKafka({
        dataDir,
        plaintextPort: 0,
        saslPlaintextPort: 0,
        saslSslPort: 0,
        controllerPort: 0,
        initialRebalanceDelayMs: 0,
        shortLived: true,
        log: (line) => console.log(`[kafka] ${line}`),
      });
      return { env: testKafkaEnv(kafka), stop: () => kafka.stop() };
    },
    postgresEnv,
    tests,
  );
}

/** The three-broker cluster for the files that reach test/support/kafka-cluster-env.ts, if any. */
async function withKafkaClusterIfNeeded(
  clusterFiles: string[],
  postgresEnv: Record<string, string>,
  tests: (env: NodeJS.ProcessEnv) => Promise<number>,
): Promise<number> {
  if (clusterFiles.length === 0) return 0;
  console.log(`[run] ${clusterFiles.length} selected test files use a three-broker cluster: starting it`);
  return withBrokers(
    'mcp-gw-test-kafka3-',
    async (dataDir) => {
      const kafka = await startLocalKafka({
        ...PRIVATE_CLUSTER,
        dataDir,
        shortLived: true,
        log: (line) => console.log(`[kafka3] ${line}`),
      });
      return { env: testKafkaClusterEnv(kafka, dataDir), stop: () => kafka.stop() };
    },
    postgresEnv,
    tests,
  );
}

/**
 * The same node_modules under Node 22 and 24 (better-sqlite3 13, node:http instead of uWS):
 * the suites that exercise storage, HTTP and worker threads, and need no Kafka: about half a
 * minute per runtime on two cores.
 */
const OTHER_RUNTIME_SUITES = [
  'test/store/',
  'test/accounts/state-store.test.ts',
  'test/namespaces/memory/store-sqlite',
  'test/namespaces/memory/memory-tools.test.ts',
  'test/gateway/http-contract.test.ts',
  'test/gateway/http-edges.test.ts',
  'test/runtimes/',
];

function otherRuntimeFiles(selected: string[]): string[] {
  return selected.filter((file) => OTHER_RUNTIME_SUITES.some((suite) => file.startsWith(suite)));
}

function fetchOtherRuntimes(): Map<RuntimeMajor, Settled<string>> {
  const majors = Object.keys(PINNED_RUNTIMES).map(Number) as RuntimeMajor[];
  return new Map(
    majors.map((major) => [
      major,
      settle(ensureNode(major, (line) => console.log(`[node ${major}] ${line}`))),
    ]),
  );
}

async function otherRuntimes(
  selected: string[],
  runtimes: Map<RuntimeMajor, Settled<string>> | undefined,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const files = otherRuntimeFiles(selected);
  if (files.length === 0 || !runtimes) return 0;
  let failed = 0;
  for (const [major, fetched] of runtimes) {
    const node = await unwrap(fetched);
    console.log(`[node ${major}] ${files.length} test files under ${node}`);
    failed ||= await run(node, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], env);
  }
  return failed;
}

process.exitCode = await main();
