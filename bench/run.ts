/**
 * `npm run bench [-- --quick]`: every figure beside a baseline measured in the same run on
 * the same machine, printed as a table and written to bench/results/. Only the ratios
 * travel between machines.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startPrivateKafka } from '../dev/kafka/private-kafka.ts';
import { benchRoot } from './child.ts';
import { runConsumeSection } from './consume.ts';
import { runEmbeddersSection } from './embedders.ts';
import { benchEras, eraRows } from './eras.ts';
import { benchConsume, benchPublish, startStack } from './event.ts';
import { benchEventCluster } from './event-cluster.ts';
import { benchScale } from './event-scale.ts';
import { runFootprintSection } from './footprint.ts';
import { benchFrontend, frontendRows } from './frontend.ts';
import { machineInfo } from './machine.ts';
import { runMemorySection } from './memory.ts';
import { runMemoryQualitySection } from './memory-quality.ts';
import { runOpsSection } from './ops.ts';
import { benchProvenance } from './provenance.ts';
import { BenchPhaseError, inPhase, type Measured, resultsOf, tableOf } from './report.ts';
import { benchToolCalls, runToolCallsSection } from './tool-calls.ts';

const quick = process.argv.includes('--quick');
const plan = quick
  ? { frontSeconds: 2, publishSeconds: 2, warmPolls: 50, ephemeralPolls: 3, groups: 100, idleMs: 5_000 }
  : { frontSeconds: 8, publishSeconds: 6, warmPolls: 300, ephemeralPolls: 10, groups: 1000, idleMs: 15_000 };
// Records drained by the group-poll rows on the three-broker cluster (`npm run bench -- event`).
const pollMessages = quick ? 2_000 : 20_000;
const log = (line: string) => console.error(`[bench] ${line}`);
const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;

/**
 * Sections that only printed now keep a file as well, `bench/results/<name>.json`, quick
 * runs included (their mode is in the file): a figure the docs quote needs one (decision 0901).
 */
async function writeSection(name: string, body: Record<string, unknown>): Promise<void> {
  const run = {
    mode: quick ? 'quick' : 'full',
    part: name,
    date: new Date().toISOString(),
    machine: { ...machineInfo(), loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
  };
  const file = join(benchRoot, 'bench', 'results', `${name}.json`);
  await writeFile(file, `${JSON.stringify({ run, ...body }, null, 2)}\n`);
  log(`wrote ${file}`);
}

// `npm run bench -- report [--check]`: the tables of docs/performance*.md from bench/results/.
// Before the build: it reads only result files and docs.
if (process.argv.includes('report')) {
  const { runReport } = await import('./report/index.ts');
  process.exit(runReport(process.argv.includes('--check'), log));
}

// The broker worker runs from dist/ as the Procfile starts it, so a fresh clone (or a source
// change since the last build) would otherwise fail, or measure old code. Incremental: seconds
// when nothing changed.
if (
  spawnSync(process.execPath, [join(benchRoot, 'scripts', 'build.mjs')], { stdio: 'inherit' }).status !== 0
) {
  log('bench phase "build" failed: npm run build did not succeed (its output is above)');
  process.exit(1);
}

// `npm run bench -- memory-quality [--embedder minilm] [--reranker <url|dir>]`: retrieval quality on the conversation set.
if (process.argv.includes('memory-quality')) {
  const at = process.argv.indexOf('--embedder');
  const provider = at > 0 ? process.argv[at + 1] : 'local';
  if (provider !== 'local' && provider !== 'minilm') throw new Error('--embedder is local or minilm');
  // --reranker <http URL | cross-encoder directory>: adds 'reranked' rows beside the default's.
  const rerankAt = process.argv.indexOf('--reranker');
  const reranker = rerankAt > 0 ? process.argv[rerankAt + 1] : undefined;
  await runMemoryQualitySection(provider, log, reranker ? { reranker } : {});
  process.exit(0);
}
// `npm run bench -- embedders`: the in-process embedders' latency and memory, side by side.
if (process.argv.includes('embedders')) {
  await runEmbeddersSection(quick, log);
  process.exit(0);
}
// `npm run bench -- footprint`: the Procfile tree's RSS idle, after load and after first memory use.
if (process.argv.includes('footprint')) {
  await runFootprintSection(log);
  process.exit(0);
}
// `npm run bench -- ops`: rate limits and tracing against both off, and two-key fairness.
if (process.argv.includes('ops')) {
  await runOpsSection(quick, log);
  process.exit(0);
}
// `npm run bench -- tools`: tools/call on memory_get, memory_search, event_publish and skills_get.
if (process.argv.includes('tools')) {
  const rows = await runToolCallsSection(quick, log);
  console.log('| measurement | ours | baseline | ratio |\n| --- | --- | --- | --- |');
  for (const row of eraRows(rows)) console.log(`| ${row.join(' | ')} |`);
  process.exit(0);
}
// `npm run bench -- memory` runs the memory section alone (it needs no broker).
if (process.argv.includes('memory')) {
  await runMemorySection(quick, log);
  process.exit(0);
}
// `npm run bench -- consume` runs the event_consume rows alone, at the full run's length.
if (process.argv.includes('consume')) {
  await runConsumeSection(quick, log);
  process.exit(0);
}

// `npm run bench -- frontend`: tools/list on both engines, 401s, and tools/list and tools/call
// in both protocol eras beside bare uWS serving the same bytes (about 3 minutes, no Kafka).
if (process.argv.includes('frontend')) {
  const front = await benchFrontend(plan.frontSeconds, log);
  const eras = await benchEras(quick ? 2 : 3, quick ? 1 : 5, log);
  await writeSection('frontend', {
    toolsList: front.toolsList,
    reject401: front.reject401,
    engine: front.engineBuild,
    eras,
  });
  console.log('| measurement | ours | baseline | ratio |\n| --- | --- | --- | --- |');
  for (const row of [...frontendRows(front), ...eraRows(eras)]) console.log(`| ${row.join(' | ')} |`);
  process.exit(0);
}

// `npm run bench -- event` runs the event_publish rows alone (c1 and c64, about a minute;
// BENCH_WORKER_NODE_FLAGS runs the worker with other Node flags than the Procfile's), then
// publish and group polls on a three-broker cluster (RF 3, acks=all; event-cluster.ts).
if (process.argv.includes('event')) {
  const broker = await startPrivateKafka(0);
  let rows: Awaited<ReturnType<typeof benchPublish>>;
  try {
    const stack = await startStack(broker.kafka.plaintext);
    rows = await benchPublish(broker.kafka.plaintext, stack, [1, 64], plan.publishSeconds, log).finally(() =>
      stack.stop(),
    );
  } finally {
    await broker.cleanup();
  }
  // One broker is stopped before three start: the two never share the machine.
  const cluster = await benchEventCluster({ publishSeconds: plan.publishSeconds, pollMessages }, log);
  await writeSection('event', {
    workerNodeFlags: process.env.BENCH_WORKER_NODE_FLAGS ?? null,
    publish: rows,
    cluster,
  });
  const publishRow = (brokers: number) => (row: (typeof rows)[number]) => ({
    brokers,
    concurrency: row.concurrency,
    rps: row.rps,
    'p50/p99 ms': `${row.p50Ms}/${row.p99Ms}`,
    'kafkajs rps': row.kafkajsRps,
    ratio: ratio(row.rps, row.kafkajsRps),
  });
  console.table([...rows.map(publishRow(1)), ...cluster.publish.map(publishRow(3))]);
  const poll = cluster.groupPoll;
  console.log(
    `group poll, 3 brokers: ${poll.messagesPerSecond} msgs/s (${poll.pollsPerSecond} polls/s, p50/p99 ${poll.pollP50Ms}/${poll.pollP99Ms} ms) against kafkajs ${poll.kafkajsMessagesPerSecond} msgs/s, ratio ${ratio(poll.messagesPerSecond, poll.kafkajsMessagesPerSecond)}`,
  );
  process.exit(0);
}

const started = Date.now();
log(
  `${quick ? 'quick' : 'full'} run; starting two local Kafka brokers (rebalance delay 0 and the default 3000 ms)`,
);
// Each phase's result is kept as it finishes: a later phase failing (a broker answering
// oddly on a fresh machine) must not throw away the figures already measured.
const m: Partial<Measured> = {};
let failure: BenchPhaseError | undefined;
const brokers = await inPhase('kafka start', () =>
  Promise.all([startPrivateKafka(0), startPrivateKafka(3000)]),
);
const [fast, managedLike] = brokers;
try {
  m.front = await inPhase('frontend', () => benchFrontend(plan.frontSeconds, log));
  // Both protocol eras, tools/list and tools/call, each beside bare uWS: medians of 5 paired rounds.
  m.eras = await inPhase('eras', () => benchEras(quick ? 2 : 3, quick ? 1 : 5, log));
  // The tools agents call most, each beside bare uWS in both eras (no Kafka: see tool-calls.ts).
  m.toolCalls = await inPhase(
    'tool calls',
    async () => (await benchToolCalls(quick ? 2 : 3, quick ? 1 : 5, log)).rows,
  );
  // Rate limits, tracing and fairness; also written to bench/results/ops.json.
  m.ops = await inPhase('ops', () => runOpsSection(quick, log));
  m.publish = await inPhase('publish', async () => {
    const stack = await startStack(fast.kafka.plaintext);
    return benchPublish(fast.kafka.plaintext, stack, [1, 16, 64, 256], plan.publishSeconds, log).finally(() =>
      stack.stop(),
    );
  });
  m.provenance = await inPhase('provenance', () =>
    benchProvenance(fast.kafka.plaintext, plan.publishSeconds, log),
  );
  m.consume = await inPhase('consume', async () => {
    const stack = await startStack(managedLike.kafka.plaintext);
    return benchConsume(managedLike.kafka.plaintext, stack, plan.warmPolls, plan.ephemeralPolls, log).finally(
      () => stack.stop(),
    );
  });
  m.scale = await inPhase('scale', () => benchScale(fast.kafka.plaintext, plan.groups, plan.idleMs, log));
} catch (error) {
  failure = error instanceof BenchPhaseError ? error : new BenchPhaseError('unknown', error);
}
try {
  const run = {
    mode: quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    machine: machineInfo(),
  };
  const failed = failure ? { phase: failure.phase, message: failure.message } : undefined;
  console.log(tableOf(m, plan.idleMs));
  // A failed run's figures go beside the last good ones, not over them: latest.json is
  // committed and quoted in docs/performance.md.
  const name = `${quick ? 'quick' : 'latest'}${failure ? '.partial' : ''}.json`;
  const file = join(benchRoot, 'bench', 'results', name);
  await writeFile(file, `${JSON.stringify(resultsOf(m, run, failed), null, 2)}\n`);
  log(`wrote ${file} after ${run.seconds} s${failure ? ` (partial: ${failure.message})` : ''}`);
  if (!failure) await inPhase('memory', () => runMemorySection(quick, log));
} catch (error) {
  failure ??= error instanceof BenchPhaseError ? error : new BenchPhaseError('report', error);
} finally {
  await Promise.all([fast.cleanup(), managedLike.cleanup()]);
}
if (failure) {
  log(failure.message);
  console.error(failure.cause);
  process.exit(1);
}
