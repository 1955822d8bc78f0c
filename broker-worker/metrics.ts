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
import type { Counter, Histogram, Registry } from 'prom-client';
import { lazyRequire } from '../shared/lazy-require.ts';
import { metricMaker } from '../shared/metrics.ts';

const promClient = lazyRequire<typeof import('prom-client')>('prom-client');

/** Bounds what a worker that is never scraped keeps: about 100 KiB. */
const PENDING_MAX = 4096;

type Observation = [method: 'publish' | 'consume', outcome: string, seconds: number];

class LoadedMetrics {
  readonly registry: Registry;
  private readonly publishes: Counter<'outcome'>;
  private readonly publishSeconds: Histogram;
  private readonly polls: Counter<'outcome'>;
  private readonly pollSeconds: Histogram;

  constructor(queueDepth: () => number) {
    const prom = promClient();
    this.registry = new prom.Registry();
    const make = metricMaker(prom, this.registry);
    this.publishes = make.counter(
      'mcp_broker_publish_total',
      'Publish calls the broker worker answered, by outcome (ok or the IPC error code)',
      ['outcome'],
    );
    this.publishSeconds = make.histogram(
      'mcp_broker_publish_duration_seconds',
      'Time the broker worker took to answer a publish call',
    );
    this.polls = make.counter(
      'mcp_broker_polls_total',
      'Consume (poll) calls the broker worker answered, by outcome (ok or the IPC error code)',
      ['outcome'],
    );
    this.pollSeconds = make.histogram(
      'mcp_broker_poll_duration_seconds',
      'Time the broker worker took to answer a poll, its wait for messages included',
    );
    make.gauge(
      'mcp_broker_ipc_queue_depth',
      'IPC calls received by the broker worker and not yet answered',
      queueDepth,
    );
    prom.collectDefaultMetrics({ register: this.registry, prefix: 'broker_worker_' });
  }

  observe([method, outcome, seconds]: Observation): void {
    if (method === 'publish') {
      this.publishes.inc({ outcome });
      this.publishSeconds.observe(seconds);
    } else {
      this.polls.inc({ outcome });
      this.pollSeconds.observe(seconds);
    }
  }
}

export class WorkerMetrics {
  private loaded: LoadedMetrics | null = null;
  private pending: Observation[] | null = [];

  constructor(private readonly queueDepth: () => number) {}

  /** Loads prom-client (once) and counts what was kept before. */
  get registry(): Registry {
    if (!this.loaded) {
      this.loaded = new LoadedMetrics(this.queueDepth);
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
