/**
 * How the gateway and the broker worker declare their Prometheus metrics: each process keeps
 * its own registry and its own table of metrics, and both turn a table into metrics here.
 * prom-client comes in as an argument, not an import, because the worker loads it only on its
 * first scrape.
 */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

type PromClient = Pick<typeof import('prom-client'), 'Counter' | 'Gauge' | 'Histogram'>;

/** The MCP semantic conventions' buckets: long polls last up to minutes. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** One metric: a histogram measures seconds, over DURATION_BUCKETS. */
export interface MetricSpec {
  kind: 'counter' | 'histogram' | 'gauge';
  name: string;
  help: string;
  labelNames?: readonly string[];
}

type Labels<S> = S extends { labelNames: readonly (infer L extends string)[] } ? L : never;

export type Metrics<T extends Record<string, MetricSpec>> = {
  [K in keyof T]: T[K]['kind'] extends 'counter'
    ? Counter<Labels<T[K]>>
    : T[K]['kind'] extends 'histogram'
      ? Histogram<Labels<T[K]>>
      : Gauge<Labels<T[K]>>;
};

/**
 * Registers every metric of `table`, in its order (the order a scrape lists them in). A gauge
 * named in `reads` is set from it at each scrape.
 */
export function declareMetrics<T extends Record<string, MetricSpec>>(
  prom: PromClient,
  registry: Registry,
  table: T,
  reads: Partial<Record<keyof T, () => number>> = {},
): Metrics<T> {
  const registers = [registry];
  const metric = (key: keyof T, { kind, name, help, labelNames = [] }: MetricSpec) => {
    if (kind === 'counter') return new prom.Counter({ name, help, labelNames, registers });
    if (kind === 'histogram') {
      return new prom.Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers });
    }
    const read = reads[key];
    return new prom.Gauge({
      name,
      help,
      labelNames,
      registers,
      ...(read && {
        collect() {
          this.set(read());
        },
      }),
    });
  };
  const made = Object.entries(table).map(([key, spec]) => [key, metric(key, spec)]);
  return Object.fromEntries(made) as Metrics<T>;
}
