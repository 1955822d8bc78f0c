/**
 * How the gateway and the broker worker declare their Prometheus metrics: each process keeps
 * its own registry and names, and both declare a metric the same way here. prom-client comes
 * in as an argument, not an import, because the worker loads it only on its first scrape.
 */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

type PromClient = Pick<typeof import('prom-client'), 'Counter' | 'Gauge' | 'Histogram'>;

/** The MCP semantic conventions' buckets: long polls last up to minutes. */
export const DURATION_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
];

export interface MetricMaker {
  counter<L extends string = never>(name: string, help: string, labelNames?: L[]): Counter<L>;
  /** In seconds, over DURATION_BUCKETS. */
  histogram<L extends string = never>(name: string, help: string, labelNames?: L[]): Histogram<L>;
  /** `read`, when given, sets the value at each scrape. */
  gauge(name: string, help: string, read?: () => number): Gauge;
}

/** Declares metrics into one registry. */
export function metricMaker(prom: PromClient, registry: Registry): MetricMaker {
  const registers = [registry];
  return {
    counter: (name, help, labelNames = []) => new prom.Counter({ name, help, labelNames, registers }),
    histogram: (name, help, labelNames = []) =>
      new prom.Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers }),
    gauge: (name, help, read) =>
      new prom.Gauge({
        name,
        help,
        registers,
        ...(read && {
          collect() {
            this.set(read());
          },
        }),
      }),
  };
}
