/**
 * Routes IPC calls to the method implementations, and turns what they throw into errors
 * an agent can act on (recording broker failures for `status`).
 */
import type { Tracer } from '@opentelemetry/api';
import type { WorkerMethod } from '../shared/ipc/messages.ts';
import { contextFrom, inSpan, ipcSpanAttributes, otelApi } from '../shared/tracing.ts';
import { BrokerClients } from './broker.ts';
import { deadlineExceeded, MethodError } from './errors.ts';
import { BrokerHealth } from './health.ts';
import type { CallContext, Dispatch } from './ipc/server.ts';
import { describeKafkaError, isAuthenticationFailure } from './kafka/errors.ts';
import type { Logger } from './logger.ts';
import { type MethodContext, makeContext } from './methods/context.ts';
import { status } from './methods/status.ts';
import type { WorkerMetrics } from './metrics.ts';
import type { WorkerSettings } from './settings.ts';

const ACTIONS: Record<WorkerMethod, string> = {
  status: 'report status',
  publish: 'publish the message',
  consume: 'read messages',
  settle: 'commit the offsets of delivered messages',
  topics: 'list topics',
  createTopic: 'create the topic',
  deleteTopic: 'delete the topic',
  metrics: 'report metrics',
};

type Calls = typeof import('./methods/calls.ts');
let calls: Calls | null = null;
/** Loaded on the first call that needs it, then read synchronously (see methods/calls.ts). */
async function loadCalls(): Promise<Calls> {
  calls ??= await import('./methods/calls.ts');
  return calls;
}

const PROBE_EVERY_MS = 2000;
const PROBE_TIMEOUT_MS = 1500;

/** Codes that say something about the broker's health (not about the caller's input). */
const BROKER_FAULTS = new Set(['BROKER_ERROR', 'AUTHENTICATION_FAILED']);

export class BrokerService {
  readonly health = new BrokerHealth();
  private readonly ctx: MethodContext;
  /** Set once the IPC server exists (the queue-depth gauge reads it). */
  metrics: WorkerMetrics | null = null;
  /** Set when OTEL_EXPORTER_OTLP_ENDPOINT is (see shared/tracing.ts); null: no spans here. */
  tracer: Tracer | null = null;

  constructor(
    settings: WorkerSettings,
    private readonly logger: Logger,
  ) {
    const base = makeContext(settings, this.health, null);
    this.ctx = base.readiness.configured
      ? makeContext(settings, this.health, new BrokerClients(settings, logger, this.health))
      : base;
  }

  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;

  /**
   * A cheap DescribeCluster every PROBE_EVERY_MS, so `status` tells whether the broker
   * answers now, not only what the last call happened to see.
   */
  startProbe(): void {
    const clients = this.ctx.clients;
    if (!clients || this.probeTimer) return;
    const probe = async () => {
      if (this.probing) return;
      this.probing = true;
      let timer: NodeJS.Timeout | undefined;
      try {
        const admin = await clients.admin.get();
        await Promise.race([
          admin.describeCluster(),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
              PROBE_TIMEOUT_MS,
            );
          }),
        ]);
        this.health.reachable = true;
      } catch (error) {
        if (this.health.reachable !== false)
          this.logger.warn({ err: (error as Error).message }, 'broker probe failed');
        this.health.reachable = false;
        // Wrong credentials are not an outage: say so, as a call would, so operators fix the right thing.
        this.health.recordProbeFailure(
          isAuthenticationFailure(error)
            ? describeKafkaError(error, 'describe the cluster').message
            : `The broker at ${this.ctx.settings.broker.bootstrapServers.join(', ')} does not answer: ${(error as Error).message}`,
        );
      } finally {
        clearTimeout(timer);
        this.probing = false;
      }
    };
    void probe();
    this.probeTimer = setInterval(() => void probe(), PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  get configured(): boolean {
    return this.ctx.readiness.configured;
  }

  get missingSettings(): string[] {
    return this.ctx.readiness.missingSettings;
  }

  readonly dispatch: Dispatch = async (method, params, call) => {
    const started = performance.now();
    const observe = (outcome: string) =>
      this.metrics?.observe(method, outcome, (performance.now() - started) / 1000);
    try {
      const result = await this.traced(method, call, () => this.run(method, params, call));
      if (method !== 'status' && method !== 'metrics') this.health.recordSuccess();
      observe('ok');
      return result;
    } catch (error) {
      if (
        error instanceof MethodError &&
        (error.code === 'CANCELLED' || error.code === 'DEADLINE_EXCEEDED')
      ) {
        observe(error.code);
        throw error;
      }
      const described = error instanceof MethodError ? error : describeKafkaError(error, ACTIONS[method]);
      observe(described.code);
      if (BROKER_FAULTS.has(described.code)) {
        this.logger.warn({ method, code: described.code, err: described.message }, 'broker call failed');
      }
      throw described;
    }
  };

  /**
   * Runs a call under a SERVER span that continues the gateway's CLIENT span, when tracing
   * is on here and the gateway sent its context; the span is active for what the call starts
   * (a publish's PRODUCER span).
   */
  private async traced<T>(method: WorkerMethod, call: CallContext, work: () => Promise<T>): Promise<T> {
    if (!this.tracer || !call.trace) return work();
    return inSpan(
      this.tracer,
      `broker-worker/${method}`,
      { kind: otelApi().SpanKind.SERVER, attributes: ipcSpanAttributes(method) },
      contextFrom(call.trace),
      work,
      (error) => (error instanceof MethodError ? error.code : 'INTERNAL'),
    );
  }

  /** The DEADLINE_EXCEEDED error for a call that ran out of time, with the probe's last broker error. */
  deadlineError = (method: WorkerMethod, deadlineMs: number): MethodError => {
    // A poll's timeout quotes no worker-wide broker error: it may name another caller's topic or group.
    const lastError = method === 'consume' ? null : (this.health.lastError?.message ?? null);
    const error = deadlineExceeded(`The ${method} call`, deadlineMs, lastError);
    if (method !== 'publish') return error;
    return new MethodError(
      error.code,
      `${error.message} The message may still be written once the broker answers; check before publishing it again.`,
      true,
    );
  };

  private run(method: WorkerMethod, params: unknown, call: CallContext): Promise<unknown> {
    if (method === 'status') return Promise.resolve(status(this.ctx));
    if (method === 'metrics')
      return this.metrics ? this.metrics.registry.getMetricsAsJSON() : Promise.resolve([]);
    // After the first call the methods are loaded: no extra turn of the event loop per call.
    return calls
      ? this.runCall(calls, method, params, call)
      : loadCalls().then((loaded) => this.runCall(loaded, method, params, call));
  }

  private runCall(
    methods: Calls,
    method: Exclude<WorkerMethod, 'status' | 'metrics'>,
    params: unknown,
    call: CallContext,
  ): Promise<unknown> {
    switch (method) {
      case 'publish':
        return methods.publish(this.ctx, params, call);
      case 'consume':
        return methods.consume(this.ctx, params, call);
      case 'settle':
        return methods.settle(this.ctx, params);
      case 'topics':
        return methods.topics(this.ctx, params);
      case 'createTopic':
        return methods.createTopic(this.ctx, params, call);
      case 'deleteTopic':
        return methods.deleteTopic(this.ctx, params, call);
    }
  }

  async closeConsumers(): Promise<void> {
    await this.ctx.clients?.consumers.close();
  }

  async close(): Promise<void> {
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.ctx.clients?.close();
  }
}
