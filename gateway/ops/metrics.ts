/**
 * The gateway's Prometheus metrics, one registry per listener thread. The main thread
 * merges every thread's registry and the broker workers' into one scrape (see scrape.ts),
 * so each thread only counts what it served. Label values are bounded by construction:
 * namespaces and tools come from the registry, methods from a fixed list, never a key id.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { declareMetrics } from '../../shared/metrics.ts';
import type { LimitEvent } from '../limits/rate-gate.ts';
import type { ReadinessReport } from './readiness.ts';

/** What a request ended as; also the audit trail's `outcome` (tool errors are `error`). */
export type Outcome = 'ok' | 'error' | 'denied' | 'rate_limited' | 'quota_exceeded';

const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
]);

/** A method name as a label: anything a client invents counts as `other`. */
export function methodLabel(method: string | null): string {
  if (method === null) return 'unknown';
  return KNOWN_METHODS.has(method) ? method : 'other';
}

export interface FinishedRequest {
  namespace: string;
  method: string | null;
  /** The registered tool name, or null; an unregistered name is never passed here. */
  tool: string | null;
  outcome: Outcome;
  seconds: number;
}

const GATEWAY_METRICS = {
  requests: {
    kind: 'counter',
    name: 'mcp_requests_total',
    help: 'MCP requests on /{namespace}/mcp by JSON-RPC method, tool (or unknown) and outcome',
    labelNames: ['namespace', 'method', 'tool', 'status'],
  },
  duration: {
    kind: 'histogram',
    name: 'mcp_request_duration_seconds',
    help: 'Time from routing an MCP request to its answer',
    labelNames: ['namespace', 'method'],
  },
  authFailures: {
    kind: 'counter',
    name: 'mcp_auth_failures_total',
    help: 'Requests refused by the API-key check, by reason',
    labelNames: ['reason'],
  },
  rateLimited: {
    kind: 'counter',
    name: 'mcp_rate_limited_total',
    help: 'Requests refused with 429 by a per-key rate limit',
    labelNames: ['namespace'],
  },
  quotaExceeded: {
    kind: 'counter',
    name: 'mcp_quota_exceeded_total',
    help: 'Tool calls refused because a daily quota was used up',
    labelNames: ['namespace', 'quota'],
  },
  pollsRefused: {
    kind: 'counter',
    name: 'mcp_polls_refused_total',
    help: 'Long polls refused by a per-key cap on concurrent polls',
    labelNames: ['namespace'],
  },
  storeFallbacks: {
    kind: 'counter',
    name: 'mcp_rate_limit_store_errors_total',
    help: 'Rate-limit checks made while RATE_LIMIT_REDIS_URL was unreachable (refused: answered 503)',
    labelNames: ['refused'],
  },
  memoryRerank: {
    kind: 'counter',
    name: 'mcp_memory_rerank_total',
    help: 'Memory searches by what their rerank stage did: ok, or why the first-stage order was kept',
    labelNames: ['outcome'],
  },
  inflight: { kind: 'gauge', name: 'mcp_inflight_requests', help: 'MCP requests being answered now' },
} as const;

/** What the scrape asks of the running gateway for PROCESS_STATE_METRICS. */
export interface ProcessState {
  readiness(): Promise<ReadinessReport>;
  /** Per namespace with a backlog; null where it is not known without loading the namespace. */
  backlogs(): Promise<Record<string, number | null>>;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly metrics = declareMetrics({ Counter, Gauge, Histogram }, this.registry, GATEWAY_METRICS);

  private readonly processMetrics: boolean;

  /** `processMetrics` in one thread only: process_* values are the whole process's, summing them would double them. */
  constructor(options: { processMetrics: boolean }) {
    this.processMetrics = options.processMetrics;
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Readiness and backlogs as gauges, so alerts need no second prober beside the scrape. They
   * are read at scrape time (one readiness run shared by both readiness gauges, the same
   * checks GET /readyz runs, each under its deadline) and only where processMetrics is on:
   * a listener thread's copy would be summed into the main thread's by the merge.
   */
  watchProcess(state: ProcessState): void {
    if (!this.processMetrics) return;
    let current: Promise<ReadinessReport> | null = null;
    // Both readiness gauges are collected side by side in one scrape: the first asks, both read its answer.
    const readiness = () => {
      current ??= state.readiness().finally(() => {
        current = null;
      });
      return current;
    };
    const registers = [this.registry];
    new Gauge({
      name: 'mcp_ready',
      help: 'Whether GET /readyz answers 200 now (1) or 503 (0, a required check failing or the gateway draining)',
      registers,
      async collect() {
        this.set((await readiness()).ready ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mcp_readiness_check_ok',
      help: 'Each GET /readyz check at this scrape: 1 passed, 0 failed',
      labelNames: ['check'],
      registers,
      async collect() {
        const { checks } = await readiness();
        this.reset();
        for (const [check, result] of Object.entries(checks)) this.set({ check }, result.ok ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mcp_namespace_backlog',
      help: 'Work a namespace holds queued and not yet done (memory: memories of every key waiting for their embedding)',
      labelNames: ['namespace'],
      registers,
      async collect() {
        const backlogs = await state.backlogs();
        // A namespace that cannot tell this time is left out, not shown at its last value.
        this.reset();
        for (const [namespace, count] of Object.entries(backlogs))
          if (count !== null) this.set({ namespace }, count);
      },
    });
  }

  started(): void {
    this.metrics.inflight.inc();
  }

  finished(request: FinishedRequest): void {
    this.metrics.inflight.dec();
    const method = methodLabel(request.method);
    const tool = request.method === 'tools/call' ? (request.tool ?? 'unknown') : '';
    this.metrics.requests.inc({ namespace: request.namespace, method, tool, status: request.outcome });
    this.metrics.duration.observe({ namespace: request.namespace, method }, request.seconds);
  }

  /** The memory namespace's rerank hook; outcomes come from a fixed list (rerank/outcome.ts). */
  readonly countRerank = (outcome: string): void => {
    this.metrics.memoryRerank.inc({ outcome });
  };

  authFailed(reason: string): void {
    this.metrics.authFailures.inc({ reason });
  }

  /** The observeLimits hook of startGateway. */
  readonly observeLimits = (event: LimitEvent): void => {
    switch (event.kind) {
      case 'rate_limited':
        this.metrics.rateLimited.inc({ namespace: event.namespace });
        return;
      case 'quota_exceeded':
        this.metrics.quotaExceeded.inc({ namespace: event.namespace, quota: event.quota });
        return;
      case 'too_many_polls':
        this.metrics.pollsRefused.inc({ namespace: event.namespace });
        return;
      case 'rate_store_unavailable':
        this.metrics.storeFallbacks.inc({ refused: String(event.refused) });
        return;
    }
  };
}
