/**
 * OpenTelemetry over OTLP/HTTP for both processes, configured by the standard variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*). With no endpoint set, the SDK and the exporter
 * are never imported: only @opentelemetry/api's no-op is in the process.
 * Versions are the last that run on Node 20 (sdk-trace-base 2.12.x, exporter 0.223.x,
 * context-async-hooks 2.12.0).
 */
import type { Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import { lazyRequire } from './lazy-require.ts';

/**
 * @opentelemetry/api costs about 5.6 MiB of RSS (bench -- footprint), so it loads when tracing
 * starts or a caller first needs it; with tracing off nothing on a request's path does.
 */
export const otelApi = lazyRequire<typeof import('@opentelemetry/api')>('@opentelemetry/api');
let started = false;

/** True once startTracing registered a provider: before that no span can be active. */
export function tracingStarted(): boolean {
  return started;
}

export interface Tracing {
  tracer: Tracer;
  /**
   * Sends what is buffered and stops exporting, waiting at most TRACE_FLUSH_MS. Resolves null
   * once the spans went out, otherwise with what kept them; it never rejects, so a collector
   * that is down or never answers cannot hold a stopping process (the exporter's own timeouts
   * are 10 and 30 s, and configurable far higher).
   */
  shutdown(): Promise<string | null>;
}

/** Longest a stopping process waits for its collector to take the spans it still holds. */
export const TRACE_FLUSH_MS = 2_000;

function boundedShutdown(shutdown: Promise<void>): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`the OTLP collector did not take the buffered spans within ${TRACE_FLUSH_MS} ms`),
      TRACE_FLUSH_MS,
    );
  });
  const sent = shutdown.then(
    () => null,
    (error: unknown) =>
      `the OTLP collector did not take the buffered spans: ${error instanceof Error ? error.message : String(error)}`,
  );
  return Promise.race([sent, late]).finally(() => clearTimeout(timer));
}

/** W3C trace context as it crosses a boundary: the IPC link, a Kafka record's headers. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export function tracingWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Registers a tracer provider, the W3C propagator and an AsyncLocalStorage context manager
 * (so a span started for a request is the parent of what that request's code starts later,
 * across awaits), or returns null when no endpoint is set.
 */
export async function startTracing(
  env: Readonly<Record<string, string | undefined>>,
  defaultServiceName: string,
  log: (message: string) => void,
): Promise<Tracing | null> {
  if (!tracingWanted(env)) return null;
  const [sdk, { OTLPTraceExporter }, { W3CTraceContextPropagator }, { resourceFromAttributes }, hooks] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  // The sampler comes from OTEL_TRACES_SAMPLER / _ARG, read by the provider itself.
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || defaultServiceName }),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const { context, propagation, trace } = otelApi();
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  started = true;
  log('tracing: exporting spans over OTLP/HTTP');
  return {
    tracer: provider.getTracer(defaultServiceName),
    shutdown: () => boundedShutdown(provider.shutdown()),
  };
}

/** The active span's context as a carrier, or undefined when no sampled-or-not span is active. */
export function currentCarrier(given?: Context): TraceCarrier | undefined {
  // Without a registered context manager the active context is always the root: no span.
  if (!given && !started) return undefined;
  const { context, propagation, trace } = otelApi();
  const active = given ?? context.active();
  if (!trace.getSpan(active)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate
    ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
    : { traceparent: carrier.traceparent };
}

/** The remote parent a carrier names (ROOT_CONTEXT when it names none). */
export function contextFrom(carrier: TraceCarrier | undefined): Context {
  const { propagation, ROOT_CONTEXT } = otelApi();
  if (!carrier) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The attributes of both ends of one broker-worker call (the gateway's CLIENT, the worker's SERVER span). */
export function ipcSpanAttributes(method: string): Record<string, string> {
  return { 'rpc.system': 'mcp-gateway-ipc', 'rpc.service': 'broker-worker', 'rpc.method': method };
}

/**
 * Runs `work` under a new span that is active while it runs (what it starts hangs off it),
 * and ends the span: ERROR status and `error.type` (`errorType` of what was thrown) when
 * work fails. `work` gets the span's context, to carry across a boundary.
 */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: { kind: SpanKind; attributes: Record<string, string> },
  parent: Context,
  work: (active: Context, span: Span) => Promise<T>,
  errorType: (error: unknown) => string,
): Promise<T> {
  const { context, SpanStatusCode, trace } = otelApi();
  const span = tracer.startSpan(name, options, parent);
  const active = trace.setSpan(parent, span);
  try {
    return await context.with(active, () => work(active, span));
  } catch (error) {
    span.setAttribute('error.type', errorType(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
