/**
 * `npm test`: static checks, then every test file under node's test runner, with one
 * private local Kafka for the whole run. The broker is stopped even when tests fail or
 * the run is interrupted, so no Java process outlives the suite.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startLocalKafka } from '../dev/kafka/local-kafka.ts';
import { testKafkaEnv } from './support/kafka-env.ts';
import { setUpMiniLm } from './support/minilm.ts';

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
  if (filter.length === 0) {
    if ((await run('npx', ['tsc', '--noEmit'])) !== 0) return 1;
    if ((await run('npx', ['biome', 'check', '.'])) !== 0) return 1;
  }
  let files = await testFiles(join(root, 'test'));
  if (filter.length > 0) files = files.filter((f) => filter.some((part) => f.includes(part)));
  if (files.length === 0) {
    console.error('no test files matched');
    return 1;
  }

  // The default embedder's model, fetched once into .cache/models as a fresh install's first
  // start would, so every test gateway on default settings finds it ready.
  await setUpMiniLm();
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-gw-test-kafka-'));
  const kafka = await startLocalKafka({
    dataDir,
    plaintextPort: 0,
    saslPlaintextPort: 0,
    saslSslPort: 0,
    controllerPort: 0,
    initialRebalanceDelayMs: 0,
    log: (line) => console.log(`[kafka] ${line}`),
  });
  const stopKafka = async () => {
    await kafka.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stopKafka().finally(() => process.exit(130));
    });
  }
  try {
    return await run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
      ...process.env,
      ...testKafkaEnv(kafka),
    });
  } finally {
    await stopKafka();
  }
}

process.exitCode = await main();
