/**
 * The gateway's Prometheus metrics, one registry per listener thread. The main thread
 * merges every thread's registry and the broker workers' into one scrape (see scrape.ts),
 * so each thread only counts what it served. Label values are bounded by construction:
 * namespaces and tools come from the registry, methods from a fixed list, never a key id.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { metricMaker } from '../../shared/metrics.ts';
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

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'namespace' | 'method' | 'tool' | 'status'>;
  private readonly duration: Histogram<'namespace' | 'method'>;
  private readonly authFailures: Counter<'reason'>;
  private readonly rateLimited: Counter<'namespace'>;
  private readonly quotaExceeded: Counter<'namespace' | 'quota'>;
  private readonly pollsRefused: Counter<'namespace'>;
  private readonly storeFallbacks: Counter<'refused'>;
  private readonly inflight: Gauge;

  /** `processMetrics` in one thread only: process_* values are the whole process's, summing them would double them. */
  constructor(options: { processMetrics: boolean }) {
    const make = metricMaker({ Counter, Gauge, Histogram }, this.registry);
    this.requests = make.counter(
      'mcp_requests_total',
      'MCP requests on /{namespace}/mcp by JSON-RPC method, tool (or unknown) and outcome',
      ['namespace', 'method', 'tool', 'status'],
    );
    this.duration = make.histogram(
      'mcp_request_duration_seconds',
      'Time from routing an MCP request to its answer',
      ['namespace', 'method'],
    );
    this.authFailures = make.counter(
      'mcp_auth_failures_total',
      'Requests refused by the API-key check, by reason',
      ['reason'],
    );
    this.rateLimited = make.counter(
      'mcp_rate_limited_total',
      'Requests refused with 429 by a per-key rate limit',
      ['namespace'],
    );
    this.quotaExceeded = make.counter(
      'mcp_quota_exceeded_total',
      'Tool calls refused because a daily quota was used up',
      ['namespace', 'quota'],
    );
    this.pollsRefused = make.counter(
      'mcp_polls_refused_total',
      'Long polls refused by a per-key cap on concurrent polls',
      ['namespace'],
    );
    this.storeFallbacks = make.counter(
      'mcp_rate_limit_store_errors_total',
      'Rate-limit checks made while RATE_LIMIT_REDIS_URL was unreachable (refused: answered 503)',
      ['refused'],
    );
    this.inflight = make.gauge('mcp_inflight_requests', 'MCP requests being answered now');
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  started(): void {
    this.inflight.inc();
  }

  finished(request: FinishedRequest): void {
    this.inflight.dec();
    const method = methodLabel(request.method);
    const tool = request.method === 'tools/call' ? (request.tool ?? 'unknown') : '';
    this.requests.inc({ namespace: request.namespace, method, tool, status: request.outcome });
    this.duration.observe({ namespace: request.namespace, method }, request.seconds);
  }

  authFailed(reason: string): void {
    this.authFailures.inc({ reason });
  }

  /** The observeLimits hook of startGateway. */
  readonly observeLimits = (event: LimitEvent): void => {
    switch (event.kind) {
      case 'rate_limited':
        this.rateLimited.inc({ namespace: event.namespace });
        return;
      case 'quota_exceeded':
        this.quotaExceeded.inc({ namespace: event.namespace, quota: event.quota });
        return;
      case 'too_many_polls':
        this.pollsRefused.inc({ namespace: event.namespace });
        return;
      case 'rate_store_unavailable':
        this.storeFallbacks.inc({ refused: String(event.refused) });
        return;
    }
  };
}
