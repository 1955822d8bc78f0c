/**
 * `npm run bench [-- --quick]`: every figure beside a baseline measured in the same run on
 * the same machine, printed as a table and written to bench/results/. Only the ratios
 * travel between machines.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startPrivateKafka } from '../dev/kafka/private-kafka.ts';
import { benchRoot } from './child.ts';
import { runConsumeSection } from './consume.ts';
import { runEmbeddersSection } from './embedders.ts';
import { benchEras, eraRows } from './eras.ts';
import { benchConsume, benchPublish, startStack } from './event.ts';
import { benchScale } from './event-scale.ts';
import { runFootprintSection } from './footprint.ts';
import { benchFrontend, frontendRows } from './frontend.ts';
import { machineInfo } from './machine.ts';
import { runMemorySection } from './memory.ts';
import { runMemoryQualitySection } from './memory-quality.ts';
import { runOpsSection } from './ops.ts';
import { benchProvenance, shareOfC64 } from './provenance.ts';
import { benchToolCalls, runToolCallsSection } from './tool-calls.ts';

const quick = process.argv.includes('--quick');
const plan = quick
  ? { frontSeconds: 2, publishSeconds: 2, warmPolls: 50, ephemeralPolls: 3, groups: 100, idleMs: 5_000 }
  : { frontSeconds: 8, publishSeconds: 6, warmPolls: 300, ephemeralPolls: 10, groups: 1000, idleMs: 15_000 };
const log = (line: string) => console.error(`[bench] ${line}`);
const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;
const share = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 10_000;
const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

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
if (process.argv.includes('report')) {
  const { runReport } = await import('./report/index.ts');
  process.exit(runReport(process.argv.includes('--check'), log));
}
// `npm run bench -- memory-quality [--embedder minilm]`: retrieval quality on the conversation set.
if (process.argv.includes('memory-quality')) {
  const at = process.argv.indexOf('--embedder');
  const provider = at > 0 ? process.argv[at + 1] : 'local';
  if (provider !== 'local' && provider !== 'minilm') throw new Error('--embedder is local or minilm');
  await runMemoryQualitySection(provider, log);
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
// BENCH_WORKER_NODE_FLAGS runs the worker with other Node flags than the Procfile's).
if (process.argv.includes('event')) {
  const broker = await startPrivateKafka(0);
  try {
    const stack = await startStack(broker.kafka.plaintext);
    const rows = await benchPublish(broker.kafka.plaintext, stack, [1, 64], plan.publishSeconds, log).finally(
      () => stack.stop(),
    );
    await writeSection('event', {
      workerNodeFlags: process.env.BENCH_WORKER_NODE_FLAGS ?? null,
      publish: rows,
    });
    console.table(
      rows.map((row) => ({
        concurrency: row.concurrency,
        rps: row.rps,
        'p50/p99 ms': `${row.p50Ms}/${row.p99Ms}`,
        'kafkajs rps': row.kafkajsRps,
        ratio: ratio(row.rps, row.kafkajsRps),
      })),
    );
  } finally {
    await broker.cleanup();
  }
  process.exit(0);
}

const started = Date.now();
log(
  `${quick ? 'quick' : 'full'} run; starting two local Kafka brokers (rebalance delay 0 and the default 3000 ms)`,
);
const [fast, managedLike] = await Promise.all([startPrivateKafka(0), startPrivateKafka(3000)]);
try {
  const front = await benchFrontend(plan.frontSeconds, log);
  // Both protocol eras, tools/list and tools/call, each beside bare uWS: medians of 5 paired rounds.
  const eras = await benchEras(quick ? 2 : 3, quick ? 1 : 5, log);
  // The tools agents call most, each beside bare uWS in both eras (no Kafka: see tool-calls.ts).
  const { rows: toolCalls } = await benchToolCalls(quick ? 2 : 3, quick ? 1 : 5, log);
  // Rate limits, tracing and fairness; also written to bench/results/ops.json.
  const ops = await runOpsSection(quick, log);

  const publishStack = await startStack(fast.kafka.plaintext);
  const publish = await benchPublish(
    fast.kafka.plaintext,
    publishStack,
    [1, 16, 64, 256],
    plan.publishSeconds,
    log,
  ).finally(() => publishStack.stop());

  const provenance = await benchProvenance(fast.kafka.plaintext, plan.publishSeconds, log);

  const consumeStack = await startStack(managedLike.kafka.plaintext);
  const consume = await benchConsume(
    managedLike.kafka.plaintext,
    consumeStack,
    plan.warmPolls,
    plan.ephemeralPolls,
    log,
  ).finally(() => consumeStack.stop());

  const scale = await benchScale(fast.kafka.plaintext, plan.groups, plan.idleMs, log);

  const c64 = publish.find((row) => row.concurrency === 64)!;
  const results = {
    run: {
      mode: quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 1000),
      machine: { ...machineInfo(), engine: front.engineBuild },
    },
    toolsList: front.toolsList,
    reject401: front.reject401,
    eras,
    toolCalls,
    ops,
    publish: {
      c64: {
        rps: c64.rps,
        kafkajsRps: c64.kafkajsRps,
        p50Ms: c64.p50Ms,
        p99Ms: c64.p99Ms,
        kafkajsP99Ms: c64.kafkajsP99Ms,
      },
      byConcurrency: publish,
    },
    consume,
    provenance: {
      ...provenance,
      hmacSignShareOfC64: shareOfC64(provenance.hmac.signUs, provenance.unsignedC64Rps),
      ed25519SignShareOfC64: shareOfC64(provenance.ed25519.signUs, provenance.unsignedC64Rps),
      hmacVerifyShareOfWarmPoll: share(provenance.hmac.verifyUs * 10, consume.warmP50Ms * 1000),
      ed25519VerifyShareOfWarmPoll: share(provenance.ed25519.verifyUs * 10, consume.warmP50Ms * 1000),
    },
    rss: {
      gatewayIdleMb: scale.gatewayIdleMb,
      workerIdleMb: scale.workerIdleMb,
      groups: scale.groups,
      workerAfter1000GroupsMb: scale.workerAfterGroupsMb,
      liveConsumersAfterGroups: scale.liveConsumersAfterGroups,
      liveConsumersAfterIdle: scale.liveConsumersAfterIdle,
      workerAfterIdleMb: scale.workerAfterIdleMb,
    },
  };

  const rows: Array<[string, string, string, string]> = [
    ...frontendRows(front),
    ...eraRows(eras),
    ...eraRows(toolCalls),
    ...publish.map((row): [string, string, string, string] => [
      `event_publish c${row.concurrency} rps (p50/p99 ms)`,
      `${row.rps} (${row.p50Ms}/${row.p99Ms})`,
      `kafkajs send ${row.kafkajsRps} (${row.kafkajsP50Ms}/${row.kafkajsP99Ms})`,
      `${ratio(row.rps, row.kafkajsRps)}×`,
    ]),
    ...(
      [
        ['HMAC', provenance.hmac],
        ['Ed25519', provenance.ed25519],
      ] as const
    ).map(([name, cost]): [string, string, string, string] => [
      `event_publish c64 rps signing with ${name} (p99 ms)`,
      `${cost.c64Rps} (${cost.p99Ms})`,
      `no signing key ${provenance.unsignedC64Rps} (${provenance.unsignedP99Ms})`,
      `${ratio(cost.c64Rps, provenance.unsignedC64Rps)}×`,
    ]),
    [
      'stamp + sign µs per publish: HMAC / Ed25519',
      `${provenance.hmac.signUs} / ${provenance.ed25519.signUs}`,
      `c64 call time ${Math.round(1e6 / provenance.unsignedC64Rps)} µs`,
      `${percent(results.provenance.hmacSignShareOfC64)} / ${percent(results.provenance.ed25519SignShareOfC64)}`,
    ],
    [
      'verify µs per consumed message: HMAC / Ed25519',
      `${provenance.hmac.verifyUs} / ${provenance.ed25519.verifyUs}`,
      `warm 10-message poll ${consume.warmP50Ms} ms`,
      `${percent(results.provenance.hmacVerifyShareOfWarmPoll)} / ${percent(results.provenance.ed25519VerifyShareOfWarmPoll)}`,
    ],
    [
      'event_consume warm p50 / p99 ms',
      `${consume.warmP50Ms} / ${consume.warmP99Ms}`,
      `per-call consumer ${consume.ephemeralP50Ms} / ${consume.ephemeralP99Ms}`,
      `${ratio(consume.ephemeralP50Ms, consume.warmP50Ms)}× faster`,
    ],
    [
      'event_consume warm p50 / p99 ms beside the bare commit (commit now follows the answer)',
      `${consume.warmP50Ms} / ${consume.warmP99Ms}`,
      `kafkajs commitOffsets ${consume.commitFloorP50Ms} / ${consume.commitFloorP99Ms}`,
      `${ratio(consume.warmP50Ms, consume.commitFloorP50Ms)}×`,
    ],
    [
      'first poll of a new group ms (delay 3000)',
      `${consume.firstPollMs} (${consume.firstPollCount} msgs)`,
      '',
      '',
    ],
    ['RSS idle MB: gateway / worker', `${scale.gatewayIdleMb} / ${scale.workerIdleMb}`, '', ''],
    [
      `worker RSS MB after ${scale.groups} groups`,
      `${scale.workerAfterGroupsMb}`,
      `live consumers ${scale.liveConsumersAfterGroups}`,
      '',
    ],
    [
      `after idle (${plan.idleMs} ms)`,
      `${scale.workerAfterIdleMb}`,
      `live consumers ${scale.liveConsumersAfterIdle}`,
      '',
    ],
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length), 8));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(['measurement', 'ours', 'baseline (same run)', 'ratio']));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));

  const file = join(benchRoot, 'bench', 'results', quick ? 'quick.json' : 'latest.json');
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${file} after ${results.run.seconds} s`);
  await runMemorySection(quick, log);
} finally {
  await Promise.all([fast.cleanup(), managedLike.cleanup()]);
}
