/**
 * The broker worker's Prometheus metrics. The worker serves no HTTP: the gateway asks for
 * them over IPC (the `metrics` method) on each scrape and merges them into its own answer.
 * Default process metrics carry a `broker_worker_` prefix, so they stay apart from the
 * gateway process's own.
 *
 * prom-client (about 9.5 MiB of RSS, bench -- footprint) loads on the first scrape, and a
 * gateway asks only when METRICS_PORT is set. Calls answered before that are kept, up to
 * PENDING_MAX, and counted when it loads: a scrape then shows them as if counted live.
 */
import type { Registry } from 'prom-client';
import { lazyRequire } from '../shared/lazy-require.ts';
import { declareMetrics, type Metrics } from '../shared/metrics.ts';

const promClient = lazyRequire<typeof import('prom-client')>('prom-client');

/** Bounds what a worker that is never scraped keeps: about 100 KiB. */
const PENDING_MAX = 4096;

type Observation = [method: 'publish' | 'consume', outcome: string, seconds: number];

const WORKER_METRICS = {
  publishes: {
    kind: 'counter',
    name: 'mcp_broker_publish_total',
    help: 'Publish calls the broker worker answered, by outcome (ok or the IPC error code)',
    labelNames: ['outcome'],
  },
  publishSeconds: {
    kind: 'histogram',
    name: 'mcp_broker_publish_duration_seconds',
    help: 'Time the broker worker took to answer a publish call',
  },
  polls: {
    kind: 'counter',
    name: 'mcp_broker_polls_total',
    help: 'Consume (poll) calls the broker worker answered, by outcome (ok or the IPC error code)',
    labelNames: ['outcome'],
  },
  pollSeconds: {
    kind: 'histogram',
    name: 'mcp_broker_poll_duration_seconds',
    help: 'Time the broker worker took to answer a poll, its wait for messages included',
  },
  queueDepth: {
    kind: 'gauge',
    name: 'mcp_broker_ipc_queue_depth',
    help: 'IPC calls received by the broker worker and not yet answered',
  },
} as const;

/** Only for a worker with a broker configured: without one there is nothing to be up or down. */
const BROKER_METRICS = {
  up: {
    kind: 'gauge',
    name: 'mcp_broker_up',
    help: "Whether the broker answered the worker's latest probe (a DescribeCluster every 2 s): 1 yes, 0 no or not yet",
  },
} as const;

class LoadedMetrics {
  readonly registry: Registry;
  private readonly metrics: Metrics<typeof WORKER_METRICS>;

  constructor(queueDepth: () => number, brokerReachable: (() => boolean | null) | undefined) {
    const prom = promClient();
    this.registry = new prom.Registry();
    this.metrics = declareMetrics(prom, this.registry, WORKER_METRICS, { queueDepth });
    if (brokerReachable)
      declareMetrics(prom, this.registry, BROKER_METRICS, { up: () => (brokerReachable() === true ? 1 : 0) });
    prom.collectDefaultMetrics({ register: this.registry, prefix: 'broker_worker_' });
  }

  observe([method, outcome, seconds]: Observation): void {
    const metrics = this.metrics;
    if (method === 'publish') {
      metrics.publishes.inc({ outcome });
      metrics.publishSeconds.observe(seconds);
    } else {
      metrics.polls.inc({ outcome });
      metrics.pollSeconds.observe(seconds);
    }
  }
}

export class WorkerMetrics {
  private loaded: LoadedMetrics | null = null;
  private pending: Observation[] | null = [];

  /** `brokerReachable` is the probe's verdict, given only when the worker has a broker configured. */
  constructor(
    private readonly queueDepth: () => number,
    private readonly brokerReachable?: () => boolean | null,
  ) {}

  /** Loads prom-client (once) and counts what was kept before. */
  get registry(): Registry {
    if (!this.loaded) {
      this.loaded = new LoadedMetrics(this.queueDepth, this.brokerReachable);
      for (const observation of this.pending ?? []) this.loaded.observe(observation);
      this.pending = null;
    }
    return this.loaded.registry;
  }

  /** `outcome` is `ok` or a stable IPC error code: a bounded set. */
  observe(method: string, outcome: string, seconds: number): void {
    if (method !== 'publish' && method !== 'consume') return;
    if (this.loaded) this.loaded.observe([method, outcome, seconds]);
    else if (this.pending && this.pending.length < PENDING_MAX) this.pending.push([method, outcome, seconds]);
  }
}
