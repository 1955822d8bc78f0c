/**
 * The broker worker's Prometheus metrics. The worker serves no HTTP: the gateway asks for
 * them over IPC (the `metrics` method) on each scrape and merges them into its own answer.
 * Default process metrics carry a `broker_worker_` prefix, so they stay apart from the
 * gateway process's own.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly publishes: Counter<'outcome'>;
  private readonly publishSeconds: Histogram;
  private readonly polls: Counter<'outcome'>;
  private readonly pollSeconds: Histogram;

  constructor(queueDepth: () => number) {
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

  /** `outcome` is `ok` or a stable IPC error code: a bounded set. */
  observe(method: string, outcome: string, seconds: number): void {
    if (method === 'publish') {
      this.publishes.inc({ outcome });
      this.publishSeconds.observe(seconds);
    } else if (method === 'consume') {
      this.polls.inc({ outcome });
      this.pollSeconds.observe(seconds);
    }
  }
}
