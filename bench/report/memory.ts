/** Tables from `npm run bench -- memory` (bench/results/memory*.json). */
import type { LoadFigures as PgLoad } from '../memory-pg-load.ts';
import { table } from './markdown.ts';
import type { ResultFile } from './source.ts';

interface Latency {
  perKey: number;
  keys: number;
  mode: 'hybrid' | 'keyword' | 'vector';
  p50Ms: number;
  p99Ms: number;
}
interface Recall {
  perKey: number;
  keys: number;
  recallAt10: number;
}
interface Write {
  concurrency: number;
  embeddings: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  getP50Ms: number;
  getP99Ms: number;
}
interface QualityRow {
  variant: string;
  mode: string;
  weights: { vector: number; keyword: number };
  minScore: number;
  recallAt10: number;
  mrr: number;
}
interface MemoryRun {
  targets: { hybridP99Ms: number; recallAt10: number; writesPerSecond: number; mcpWriteP99Ms: number };
  inserts: { writesPerSecond: number; writesPerSecondAtCap: number; vectorsPerSecond: number };
  search: { latency: Latency[]; recall: Recall[]; bytesPerMemory: number };
  postgres?: { latency: Latency[]; recall: Recall[]; loads?: PgLoad[] };
  quality?: {
    rows: QualityRow[];
    floors: { minScore: number; keptCorrect: number; emptiedUnanswerable: number }[];
    chosen: { minScore: number };
  };
  queryEmbedding: { p50Ms: number; p99Ms: number };
  mcpWrite: Write[];
  isolation: { queries: number; hits: number; foreignHits: number };
}

const EMBEDDERS: Record<string, string> = {
  minilm: 'MiniLM (the default embedder)',
  local: 'USE-lite (`local`)',
  none: 'embeddings off',
};
const thousands = (n: number) => (n % 1000 === 0 ? `${n / 1000}k` : `${n}`);
const keysLabel = (keys: number) => `${keys} ${keys === 1 ? 'key' : 'keys'}`;
const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

/**
 * The rows the gateway tables carry: memory_write at c16 per embedder beside memory_get, and
 * hybrid search at 100k per key, with Postgres's row when asked. Columns: measurement, ours,
 * baseline, target.
 */
export function memoryHeadlineRows(
  file: ResultFile,
  options: { writes: string[]; keys: number[]; rps: boolean; postgres?: boolean },
): string[][] {
  const run = file.data as unknown as MemoryRun;
  const target = `≤ ${run.targets.mcpWriteP99Ms}`;
  const rows = options.writes.map((embeddings) => {
    const w = run.mcpWrite.find((r) => r.concurrency === 16 && r.embeddings === embeddings);
    if (!w) throw new Error(`${file.name} has no c16 memory_write row for ${embeddings}`);
    return [
      `memory_write c16, ${EMBEDDERS[embeddings] ?? embeddings}`,
      `${w.p50Ms} / ${w.p99Ms}${options.rps ? ` (${w.rps} rps)` : ''}`,
      `memory_get ${w.getP50Ms} / ${w.getP99Ms}`,
      target,
    ];
  });
  for (const keys of options.keys) {
    const s = run.search.latency.find((r) => r.perKey === 100_000 && r.keys === keys && r.mode === 'hybrid');
    const recall = run.search.recall.find((r) => r.perKey === 100_000 && r.keys === keys);
    if (!s || !recall) throw new Error(`${file.name} has no 100k hybrid row for ${keys} keys`);
    rows.push([
      `SQLite hybrid search, 100k per key × ${keysLabel(keys)}`,
      `${s.p50Ms} / ${s.p99Ms}`,
      `recall@10 vs exact ${recall.recallAt10}`,
      `≤ ${run.targets.hybridP99Ms}`,
    ]);
  }
  const pg = run.postgres?.latency.find((r) => r.mode === 'hybrid');
  if (options.postgres && pg) {
    rows.push([
      `Postgres (PGlite) hybrid search, ${thousands(pg.perKey)} per key`,
      `${pg.p50Ms} / ${pg.p99Ms}`,
      `HNSW recall@10 ${run.postgres!.recall[0]?.recallAt10}`,
      '',
    ]);
  }
  return rows;
}

export const memoryHeadlineTable =
  (options: Parameters<typeof memoryHeadlineRows>[1]) =>
  ([file]: ResultFile[]): string =>
    table(
      ['measurement', 'ours (p50/p99 ms)', 'baseline (same run)', 'target'],
      memoryHeadlineRows(file!, options),
    );

/** Every row of one memory run, each beside its target and verdict where it has one. */
export function memoryFullTable([file]: ResultFile[]): string {
  const run = file!.data as unknown as MemoryRun;
  const t = run.targets;
  const rows: string[][] = [
    [
      'store writes/s (1 row per transaction)',
      `${run.inserts.writesPerSecond}`,
      `≥ ${t.writesPerSecond}`,
      verdict(run.inserts.writesPerSecond >= t.writesPerSecond),
    ],
    ['store writes/s at the cap (each evicts one)', `${run.inserts.writesPerSecondAtCap}`, '', ''],
    ['vectors stored/s (bit index + float)', `${run.inserts.vectorsPerSecond}`, '', ''],
    ...run.mcpWrite.map((w) => [
      `MCP memory_write c${w.concurrency} p50 / p99 ms (rps), embeddings ${w.embeddings}`,
      `${w.p50Ms} / ${w.p99Ms} (${w.rps})`,
      `p99 ≤ ${t.mcpWriteP99Ms}; memory_get ${w.getP50Ms} / ${w.getP99Ms}`,
      verdict(w.p99Ms <= t.mcpWriteP99Ms),
    ]),
    ...run.search.latency.map((s) => {
      const targeted = s.mode === 'hybrid' && s.perKey === 100_000;
      return [
        `${s.mode} search p50 / p99 ms, ${s.perKey} per key × ${keysLabel(s.keys)}`,
        `${s.p50Ms} / ${s.p99Ms}`,
        targeted ? `p99 ≤ ${t.hybridP99Ms}` : '',
        targeted ? verdict(s.p99Ms <= t.hybridP99Ms) : '',
      ];
    }),
    ...run.search.recall.map((r) => [
      `vector recall@10 vs exact, ${r.perKey} per key × ${r.keys}`,
      `${r.recallAt10}`,
      `≥ ${t.recallAt10}`,
      verdict(r.recallAt10 >= t.recallAt10),
    ]),
    [
      'query embedding p50 / p99 ms (local, one text)',
      `${run.queryEmbedding.p50Ms} / ${run.queryEmbedding.p99Ms}`,
      '',
      '',
    ],
    ...qualityRows(run),
    [
      'isolation: foreign hits over every benchmark query',
      `${run.isolation.foreignHits}`,
      `${run.isolation.queries} queries, ${run.isolation.hits} hits`,
      verdict(run.isolation.foreignHits === 0),
    ],
    ['DB bytes per memory (512-d, text + FTS + vectors)', `${run.search.bytesPerMemory}`, '', ''],
  ];
  return table(['memory measurement', 'value', 'target / baseline', 'verdict'], rows);
}

/** The WordNet quality rows that runs of 2026-11-23 still carried (later runs moved them out). */
function qualityRows(run: MemoryRun): string[][] {
  if (!run.quality) return [];
  const q = run.quality;
  return [
    ...q.rows.map((r) => {
      const weights = r.mode === 'hybrid' ? ` w=${r.weights.vector}:${r.weights.keyword}` : '';
      const floor = r.minScore > 0 ? ` floor ${r.minScore}` : '';
      return [
        `quality ${r.variant} ${r.mode}${weights}${floor}: recall@10 / MRR`,
        `${r.recallAt10} / ${r.mrr}`,
        '',
        '',
      ];
    }),
    ...q.floors.map((f) => [
      `floor ${f.minScore}: correct vector hits kept / unanswerable emptied`,
      `${f.keptCorrect} / ${f.emptiedUnanswerable}`,
      '',
      f.minScore === q.chosen.minScore ? 'chosen' : '',
    ]),
  ];
}

/** `100000` as `100k`, `1000000` as `1M`. */
const size = (n: number) => (n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : thousands(n));

/**
 * Search on both engines at the scale layouts of one run: per key size and keys in the
 * table, each mode's p50 / p99 and recall@10 against an exact scan of the same key.
 */
export function memoryScaleTable([file]: ResultFile[]): string {
  const run = file!.data as unknown as MemoryRun;
  const engines: Array<[string, { latency: Latency[]; recall: Recall[] }]> = [['SQLite', run.search]];
  if (run.postgres) engines.push(['Postgres', run.postgres]);
  const rows: string[][] = [];
  for (const [engine, figures] of engines) {
    for (const r of figures.recall) {
      if (r.perKey < 100_000 && engine === 'SQLite' && figures.recall.some((o) => o.perKey >= 100_000))
        continue;
      const mode = (m: Latency['mode']) => {
        const l = figures.latency.find((x) => x.perKey === r.perKey && x.keys === r.keys && x.mode === m);
        return l ? `${l.p50Ms} / ${l.p99Ms}` : '';
      };
      const hybrid = figures.latency.find(
        (x) => x.perKey === r.perKey && x.keys === r.keys && x.mode === 'hybrid',
      );
      rows.push([
        engine,
        `${size(r.perKey)} × ${keysLabel(r.keys)} (${size(r.perKey * r.keys)} in the ${engine === 'SQLite' ? 'file' : 'table'})`,
        mode('hybrid'),
        mode('keyword'),
        mode('vector'),
        `${r.recallAt10}`,
        hybrid && r.perKey >= 100_000 ? verdict(hybrid.p99Ms <= run.targets.hybridP99Ms) : '',
      ]);
    }
  }
  return table(
    [
      'engine',
      'per key × keys',
      'hybrid p50 / p99 ms',
      'keyword p50 / p99 ms',
      'vector p50 / p99 ms',
      'recall@10 vs exact',
      `hybrid p99 ≤ ${run.targets.hybridP99Ms}`,
    ],
    rows,
  );
}

/** How the Postgres scale layouts were loaded: rows by SQL batches, then one HNSW build. */
export function memoryPgLoadTable([file]: ResultFile[]): string {
  const run = file!.data as unknown as MemoryRun;
  const loads = run.postgres?.loads ?? [];
  if (loads.length === 0) throw new Error(`${file!.name} has no Postgres load figures`);
  return table(
    ['memories in the table', 'keys', 'load s (rows/s)', 'HNSW build s (whole table)'],
    loads.map((l) => [
      size(l.rows),
      `${l.keys}`,
      `${l.loadSeconds} (${l.rowsPerSecond})`,
      l.indexSeconds === null ? `not built within ${l.indexBudgetSeconds}` : `${l.indexSeconds}`,
    ]),
  );
}
