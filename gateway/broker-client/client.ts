/**
 * BrokerWorkerClient: how the gateway calls the broker worker(s). One WorkerLink per
 * configured worker; calls with a routing key (the consumer group) always go to the worker
 * that key hashes to, so a group's consumer lives in exactly one place. Calls without a
 * key (publish, topics, admin, status) go to any connected worker.
 */
import { formatEndpoint, type WorkerEndpoint } from '../../shared/ipc/endpoint.ts';
import type { WorkerMethod, WorkerMethods } from '../../shared/ipc/messages.ts';
import { currentCarrier, inSpan, ipcSpanAttributes, otelApi, tracingStarted } from '../../shared/tracing.ts';
import { WorkerCallError } from './errors.ts';
import { pickWorker } from './routing.ts';
import { type BrokerClientSettings, loadBrokerClientSettings } from './settings.ts';
import { DEFAULT_LINK_OPTIONS, WorkerLink, type WorkerLinkOptions } from './worker-link.ts';

export interface CallOptions {
  signal?: AbortSignal;
  /** The call's budget; the worker gets the same deadline (see callDeadlineMs in shared/ipc/messages.ts). */
  timeoutMs: number;
  /** Calls with the same key go to the same worker. Default for group polls: the group. */
  routingKey?: string;
}

export interface BrokerWorkerClientOptions {
  workers: WorkerEndpoint[];
  /** Routing key for group polls that name no group (the worker falls back to this group too). */
  defaultGroup?: string | null;
  link?: Partial<WorkerLinkOptions>;
}

export interface WorkerLinkState {
  endpoint: string;
  connected: boolean;
  workerId: string | null;
  lastError: string | null;
  inFlight: number;
}

export class BrokerWorkerClient {
  private readonly links: WorkerLink[];
  private readonly labels: string[];
  private readonly defaultGroup: string | null;
  private roundRobin = 0;
  private closed = false;

  /** From BROKER_WORKERS / DATA_DIR / BROKER_CONSUMER_GROUP; throws SettingsError on a bad list. */
  static fromEnv(env: Record<string, string | undefined> = process.env): BrokerWorkerClient {
    const settings: BrokerClientSettings = loadBrokerClientSettings(env);
    return new BrokerWorkerClient({
      workers: settings.workers,
      defaultGroup: settings.defaultGroup,
      link: { token: settings.token },
    });
  }

  constructor(options: BrokerWorkerClientOptions) {
    if (options.workers.length === 0) throw new Error('BrokerWorkerClient needs at least one worker address');
    const linkOptions = { ...DEFAULT_LINK_OPTIONS, ...options.link };
    this.links = options.workers.map((endpoint) => new WorkerLink(endpoint, linkOptions));
    this.labels = options.workers.map(formatEndpoint);
    this.defaultGroup = options.defaultGroup ?? null;
    for (const link of this.links) link.start();
  }

  async call<M extends WorkerMethod>(
    method: M,
    params: WorkerMethods[M]['params'],
    options: CallOptions,
  ): Promise<WorkerMethods[M]['result']> {
    if (this.closed) {
      throw new WorkerCallError(
        'WORKER_UNREACHABLE',
        'The broker worker client is closed (the gateway is shutting down).',
        true,
      );
    }
    const link = this.route(method, params, options.routingKey);
    // Tracing off: no span can be active, and @opentelemetry/api stays unloaded (about 5.6 MiB).
    const otel = tracingStarted() ? otelApi() : null;
    const parent = otel?.context.active();
    // Only inside a traced request: background calls (metrics scrapes, probes) start no trace.
    if (!otel || !parent || !otel.trace.getSpan(parent)) {
      return (await link.call(
        method,
        params,
        options.timeoutMs,
        options.signal,
      )) as WorkerMethods[M]['result'];
    }
    return (await inSpan(
      otel.trace.getTracer('mcp-gateway'),
      `broker-worker/${method}`,
      { kind: otel.SpanKind.CLIENT, attributes: ipcSpanAttributes(method) },
      parent,
      (active) => link.call(method, params, options.timeoutMs, options.signal, currentCarrier(active)),
      (error) => (error instanceof WorkerCallError ? error.code : 'INTERNAL'),
    )) as WorkerMethods[M]['result'];
  }

  /** True when at least one worker link is up (cheap; for capabilities and health). */
  isConnected(): boolean {
    return this.links.some((link) => link.connected);
  }

  state(): WorkerLinkState[] {
    return this.links.map((link) => ({
      endpoint: link.label,
      connected: link.connected,
      workerId: link.workerId,
      lastError: link.lastError,
      inFlight: link.inFlight,
    }));
  }

  /** Each connected worker's metrics (prom-client JSON), for the gateway's one scrape. */
  workerMetrics(timeoutMs: number): Array<Promise<unknown[]>> {
    return this.links
      .filter((link) => link.connected)
      .map((link) => link.call('metrics', {}, timeoutMs) as Promise<unknown[]>);
  }

  /** The worker address a routing key maps to (for logs and tests). */
  workerFor(routingKey: string): string {
    return this.labels[pickWorker(this.labels, routingKey)]!;
  }

  /** Answers the polls in flight now, for a stopping gateway (see WorkerLink.endPolls). */
  endPolls(): void {
    const error = new WorkerCallError(
      'WORKER_UNREACHABLE',
      'The gateway is shutting down, so this poll was stopped early. It took no messages and nothing was committed for it: poll again in a moment.',
      true,
    );
    for (const link of this.links) link.endPolls(error);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const link of this.links) link.close();
  }

  private route<M extends WorkerMethod>(
    method: M,
    params: WorkerMethods[M]['params'],
    routingKey?: string,
  ): WorkerLink {
    const key = routingKey ?? groupOf(method, params, this.defaultGroup);
    if (key !== null) return this.links[pickWorker(this.labels, key)]!;
    // No affinity needed: spread over connected workers, or try one if none is connected.
    const start = this.roundRobin++ % this.links.length;
    for (let i = 0; i < this.links.length; i += 1) {
      const link = this.links[(start + i) % this.links.length]!;
      if (link.connected) return link;
    }
    return this.links[start]!;
  }
}

/** The consumer group a call belongs to, when it reads through one. */
function groupOf<M extends WorkerMethod>(
  method: M,
  params: WorkerMethods[M]['params'],
  defaultGroup: string | null,
): string | null {
  if (method !== 'consume') return null;
  const consume = params as WorkerMethods['consume']['params'];
  if ((consume.from ?? 'group') !== 'group') return null;
  return consume.group ?? defaultGroup;
}
