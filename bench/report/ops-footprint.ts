/** Tables from `npm run bench -- ops`, `-- footprint` and `-- embedders`. */
import { table, times } from './markdown.ts';
import type { ResultFile } from './source.ts';

interface Ops {
  rps: Record<string, number>;
  ratioToOff: Record<string, number>;
}
const OPS_VARIANTS: [string, string][] = [
  ['off', 'off'],
  ['limitsLocal', 'rate limits on, in memory'],
  ['limitsRedis', 'rate limits on, through Valkey (leases)'],
  ['tracingUnsampled', 'tracing configured, sampling nothing'],
  ['tracingSampled', 'tracing, every request sampled and exported'],
];

export function opsTable([file]: ResultFile[]): string {
  const ops = file!.data as unknown as Ops;
  return table(
    ['variant', 'admitted req/s (median of 5)', 'against off (median of per-round ratios)'],
    OPS_VARIANTS.map(([key, name]) => [
      name,
      `${ops.rps[key]}`,
      `${key === 'off' ? 1 : ops.ratioToOff[key]}`,
    ]),
  );
}

interface Moment {
  gateway: number;
  worker: number;
  tree: number;
  gatewayFloor?: number;
  workerFloor?: number;
  treeFloor?: number;
  requests?: number;
  requestsPerSecond?: number;
  growth?: number;
}
interface Footprint {
  idle: Moment;
  afterRequests: Moment;
  afterFirstMemoryUse: Moment;
}

const mib = (n: number | undefined) => `${n} MiB`;
const signedPercent = (fraction: number) => {
  const text = `${Math.abs(Math.round(fraction * 1000) / 10)}%`;
  return fraction < 0 ? `−${text}` : `+${text}`;
};
const MOMENTS = (f: Footprint): [string, Moment][] => [
  ['idle', f.idle],
  [
    `after ${f.afterRequests.requests?.toLocaleString('en')} \`tools/list\` (${f.afterRequests.requestsPerSecond} req/s)`,
    f.afterRequests,
  ],
  ['after the first memory use', f.afterFirstMemoryUse],
];

/** Each process beside the floor process that loads only the libraries it needs. */
export function footprintFloorsTable([file]: ResultFile[]): string {
  const f = file!.data as unknown as Footprint;
  return table(
    ['moment', 'gateway', 'its floor', 'broker worker', 'its floor', 'tree', 'floor of the tree'],
    MOMENTS(f).map(([name, m]) => [
      name,
      mib(m.gateway),
      mib(m.gatewayFloor),
      mib(m.worker),
      mib(m.workerFloor),
      m.growth === undefined ? mib(m.tree) : `${mib(m.tree)} (${signedPercent(m.growth)})`,
      mib(m.treeFloor),
    ]),
  );
}

/** The Procfile's tree, with an earlier run's idle figures beside it when a second file is given. */
export function footprintTable([file, before]: ResultFile[]): string {
  const f = file!.data as unknown as Footprint;
  const was = (before?.data as unknown as Footprint | undefined)?.idle;
  const withWas = (value: number, old: number | undefined, moment: Moment) =>
    moment === f.idle && old !== undefined ? `${mib(value)} (was ${old})` : mib(value);
  return table(
    ['moment', 'gateway', 'broker worker', 'tree'],
    MOMENTS(f).map(([name, m]) => [
      name === 'after the first memory use' ? 'after the first memory use (embedder loaded)' : name,
      withWas(m.gateway, was?.gateway, m),
      withWas(m.worker, was?.worker, m),
      m.growth === undefined ? withWas(m.tree, was?.tree, m) : `${mib(m.tree)} (${signedPercent(m.growth)})`,
    ]),
  );
}

interface Embedder {
  provider: string;
  queryP50Ms: number;
  queryP99Ms: number;
  batch32P50Ms: number;
  batch32P99Ms: number;
  textsPerSecond: number;
  threadRssMb: number;
  firstCallMs: number;
}

/** MiniLM beside USE-lite, each ratio MiniLM's over USE-lite's. */
export function embeddersTable([file]: ResultFile[]): string {
  const data = file!.data as { bareThreadRssMb: number; results: Embedder[] };
  const of = (provider: string) => {
    const found = data.results.find((r) => r.provider === provider);
    if (!found) throw new Error(`${file!.name} has no ${provider} row`);
    return found;
  };
  const [m, l] = [of('minilm'), of('local')];
  const bare = data.bareThreadRssMb;
  const row = (name: string, pick: (e: Embedder) => number, show: (e: Embedder) => string) => [
    name,
    show(m),
    show(l),
    times(pick(m) / pick(l)),
  ];
  return table(
    ['embedder (1 thread)', 'minilm', 'local (USE-lite)', 'ratio'],
    [
      row(
        'query p50 / p99 ms',
        (e) => e.queryP50Ms,
        (e) => `${e.queryP50Ms} / ${e.queryP99Ms}`,
      ),
      row(
        'batch of 32 p50 / p99 ms',
        (e) => e.batch32P50Ms,
        (e) => `${e.batch32P50Ms} / ${e.batch32P99Ms}`,
      ),
      row(
        'texts/s in batches of 32',
        (e) => e.textsPerSecond,
        (e) => `${e.textsPerSecond}`,
      ),
      row(
        'RSS of the pool thread + model MB',
        (e) => e.threadRssMb,
        (e) => `${e.threadRssMb}`,
      ),
      row(
        `RSS of the model alone MB (bare pool thread ${bare})`,
        (e) => e.threadRssMb - bare,
        (e) => `${e.threadRssMb - bare}`,
      ),
      row(
        'first call ms (thread start + model load)',
        (e) => e.firstCallMs,
        (e) => `${e.firstCallMs}`,
      ),
    ],
  );
}
