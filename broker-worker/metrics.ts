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

const promClient = lazyRequire<typeof import('prom-client')>('prom-client');

const BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
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
    const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } = promClient();
    this.registry = new Registry();
    const registers = [this.registry];
    this.publishes = new Counter({
      name: 'mcp_broker_publish_total',
      help: 'Publish calls the broker worker answered, by outcome (ok or the IPC error code)',
      labelNames: ['outcome'],
      registers,
    });
    this.publishSeconds = new Histogram({
      name: 'mcp_broker_publish_duration_seconds',
      help: 'Time the broker worker took to answer a publish call',
      buckets: BUCKETS,
      registers,
    });
    this.polls = new Counter({
      name: 'mcp_broker_polls_total',
      help: 'Consume (poll) calls the broker worker answered, by outcome (ok or the IPC error code)',
      labelNames: ['outcome'],
      registers,
    });
    this.pollSeconds = new Histogram({
      name: 'mcp_broker_poll_duration_seconds',
      help: 'Time the broker worker took to answer a poll, its wait for messages included',
      buckets: BUCKETS,
      registers,
    });
    new Gauge({
      name: 'mcp_broker_ipc_queue_depth',
      help: 'IPC calls received by the broker worker and not yet answered',
      registers,
      collect() {
        this.set(queueDepth());
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'broker_worker_' });
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
