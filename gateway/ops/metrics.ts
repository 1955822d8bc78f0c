/**
 * The gateway's Prometheus metrics, one registry per listener thread. The main thread
 * merges every thread's registry and the broker workers' into one scrape (see scrape.ts),
 * so each thread only counts what it served. Label values are bounded by construction:
 * namespaces and tools come from the registry, methods from a fixed list, never a key id.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { declareMetrics } from '../../shared/metrics.ts';
import type { LimitEvent } from '../limits/rate-gate.ts';

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

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly metrics = declareMetrics({ Counter, Gauge, Histogram }, this.registry, GATEWAY_METRICS);

  /** `processMetrics` in one thread only: process_* values are the whole process's, summing them would double them. */
  constructor(options: { processMetrics: boolean }) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
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
