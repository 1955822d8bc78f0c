/**
 * `npx tsx bench/embedders.ts [--quick]` or `npm run bench -- embedders`: the two
 * in-process embedders side by side, each through the product's own piscina pool with one
 * thread: a single short query's latency after warm-up, a batch of 32 memories' latency,
 * and what the pool thread with its model loaded adds to the process's RSS. Each provider
 * runs in a fresh child process, one after the other, so neither sees the other's memory
 * or competes for the CPU. Texts are WordNet's (examples as queries, definitions as
 * memories). Results: bench/results/embedders.json.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Embedder } from '../gateway/namespaces/memory/embeddings/embedder.ts';
import { miniLmDir } from '../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { fetchMiniLm } from '../gateway/namespaces/memory/embeddings/minilm/setup.ts';
import { benchRoot } from './child.ts';
import { machineInfo } from './machine.ts';
import { labelledQueries, memoryText, wordnetSynsets } from './memory-data.ts';
import { percentile } from './stats.ts';

const PROVIDERS = ['local', 'minilm'] as const;
type Provider = (typeof PROVIDERS)[number];

interface Figures {
  provider: Provider;
  model: string;
  dimensions: number;
  /** First call: thread start, model load, first inference. */
  firstCallMs: number;
  /** Process RSS after the first call minus before the pool existed. */
  threadRssMb: number;
  queries: number;
  queryP50Ms: number;
  queryP99Ms: number;
  batches: number;
  batch32P50Ms: number;
  batch32P99Ms: number;
  textsPerSecond: number;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => round(bytes / 2 ** 20, 0);

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/**
 * In a child: a pool thread with no model (an HTTP provider whose endpoint refuses at once),
 * so the thread's own cost (V8 isolate, tsx, the task module) can be told from the model's.
 */
async function bareThreadRssMb(): Promise<number> {
  const rssBefore = process.memoryUsage().rss;
  const embedder = new Embedder(
    { provider: 'openai', url: 'http://127.0.0.1:9', model: 'none', timeoutMs: 1000 },
    { threads: 1, queryTimeoutMs: 5000 },
  );
  await embedder.embed(['start the thread']).catch(() => {});
  const grown = mb(process.memoryUsage().rss - rssBefore);
  await embedder.close();
  return grown;
}

/** In the child: one provider, one pool thread, nothing else loaded after the baseline. */
async function measure(provider: Provider, quick: boolean): Promise<Figures> {
  const queryCount = quick ? 60 : 300;
  const batchCount = quick ? 8 : 30;
  const queries = labelledQueries(20_000, queryCount + 20).map((q) => q.raw);
  const memories = wordnetSynsets()
    .slice(0, batchCount * 32 + 32)
    .map(memoryText);
  const rssBefore = process.memoryUsage().rss;
  const embedder = new Embedder({ provider }, { threads: 1, queryTimeoutMs: 120_000 });
  try {
    const firstCallMs = await timed(() => embedder.embed(['warm the model']));
    const threadRssMb = mb(process.memoryUsage().rss - rssBefore);
    // Warm-up past the first call: JIT in the thread, allocator pools in the runtime.
    for (const text of queries.slice(0, 20)) await embedder.embed([text]);
    await embedder.embed(memories.slice(0, 32));
    // embed(), not embedQuery(): every query is new and none may come from the cache.
    const queryTimes: number[] = [];
    for (const text of queries.slice(20)) queryTimes.push(await timed(() => embedder.embed([text])));
    const batchTimes: number[] = [];
    for (let b = 1; b <= batchCount; b++) {
      batchTimes.push(await timed(() => embedder.embed(memories.slice(b * 32, (b + 1) * 32))));
    }
    queryTimes.sort((a, b) => a - b);
    batchTimes.sort((a, b) => a - b);
    return {
      provider,
      model: embedder.model!.model,
      dimensions: embedder.model!.dimensions,
      firstCallMs: round(firstCallMs, 0),
      threadRssMb,
      queries: queryTimes.length,
      queryP50Ms: round(percentile(queryTimes, 50), 2),
      queryP99Ms: round(percentile(queryTimes, 99), 2),
      batches: batchTimes.length,
      batch32P50Ms: round(percentile(batchTimes, 50)),
      batch32P99Ms: round(percentile(batchTimes, 99)),
      textsPerSecond: round((32 * batchTimes.length) / (batchTimes.reduce((a, b) => a + b, 0) / 1000), 0),
    };
  } finally {
    await embedder.close();
  }
}

export async function runEmbeddersSection(quick: boolean, log: (line: string) => void): Promise<Figures[]> {
  // The product's own set-up: downloads and builds on a fresh machine, instant after.
  await fetchMiniLm({ dir: miniLmDir(), log: (line) => log(`embedders: ${line}`) });
  const inChild = async (what: string): Promise<unknown> => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', import.meta.filename, '--child', what, ...(quick ? ['--quick'] : [])],
      { cwd: benchRoot, maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
  };
  const bareThreadMb = (await inChild('bare-thread')) as number;
  const results: Figures[] = [];
  for (const provider of PROVIDERS) {
    log(`embedders: measuring ${provider} in a fresh process`);
    results.push((await inChild(provider)) as Figures);
  }
  const [base, ours] = results as [Figures, Figures];
  const row = (label: string, pick: (f: Figures) => number, second?: (f: Figures) => number) => {
    const cell = (f: Figures) => (second ? `${pick(f)} / ${second(f)}` : `${pick(f)}`);
    return [label, cell(ours), cell(base), `${round(pick(ours) / pick(base), 2)}×`];
  };
  const modelMb = (f: Figures) => f.threadRssMb - bareThreadMb;
  const rows = [
    row(
      'query p50 / p99 ms',
      (f) => f.queryP50Ms,
      (f) => f.queryP99Ms,
    ),
    row(
      'batch of 32 p50 / p99 ms',
      (f) => f.batch32P50Ms,
      (f) => f.batch32P99Ms,
    ),
    row('texts/s in batches of 32', (f) => f.textsPerSecond),
    row('RSS of the pool thread + model MB', (f) => f.threadRssMb),
    row(`RSS of the model alone MB (bare thread ${bareThreadMb})`, modelMb),
    row('first call ms (thread start + load)', (f) => f.firstCallMs),
  ];
  const header = ['embedder (1 thread)', 'minilm', 'local (USE-lite)', 'ratio'];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));
  const file = join(benchRoot, 'bench', 'results', quick ? 'embedders-quick.json' : 'embedders.json');
  const run = { mode: quick ? 'quick' : 'full', date: new Date().toISOString(), machine: machineInfo() };
  await writeFile(file, `${JSON.stringify({ run, bareThreadRssMb: bareThreadMb, results }, null, 2)}\n`);
  log(`embedders: wrote ${file}`);
  return results;
}

const quick = process.argv.includes('--quick');
const child = process.argv.indexOf('--child');
if (child > 0) {
  const what = process.argv[child + 1];
  const figures = what === 'bare-thread' ? await bareThreadRssMb() : await measure(what as Provider, quick);
  console.log(JSON.stringify(figures));
} else if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  await runEmbeddersSection(quick, (line) => console.error(`[bench] ${line}`));
}
