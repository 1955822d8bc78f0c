/**
 * OpenTelemetry traces over OTLP/HTTP, configured by the standard variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*). With no endpoint set, the SDK and the exporter
 * are never imported: only @opentelemetry/api's no-op is in the process.
 * Versions are the last that run on Node 20 (sdk-trace-base 2.12.x, exporter 0.223.x).
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { RequestRecord } from './observer.ts';

export interface Tracing {
  tracer: Tracer;
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

export function tracingWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export async function startTracing(
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<Tracing | null> {
  if (!tracingWanted(env)) return null;
  const [sdk, { OTLPTraceExporter }, { W3CTraceContextPropagator }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
    ]);
  // The sampler comes from OTEL_TRACES_SAMPLER / _ARG, read by the provider itself.
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'mcp-gateway' }),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())],
  });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  log.info('tracing: exporting spans over OTLP/HTTP');
  return { tracer: provider.getTracer('mcp-gateway'), shutdown: () => provider.shutdown() };
}

/** A server span for one MCP request, continuing an incoming `traceparent`. */
export function startRequestSpan(tracer: Tracer, headers: Record<string, string>): Span {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return tracer.startSpan('mcp', { kind: SpanKind.SERVER }, parent ?? context.active());
}

/**
 * Names and ends the span once the request is understood, with the MCP semantic-convention
 * attributes: `{mcp.method.name} {tool}`; ERROR status whenever `error.type` is set.
 */
export function endRequestSpan(span: Span, record: RequestRecord, protocolVersion: string | undefined): void {
  const method = record.method ?? 'unknown';
  const tool = record.method === 'tools/call' && record.knownTool ? record.tool : null;
  span.updateName(tool ? `${method} ${tool}` : method);
  if (span.isRecording()) {
    span.setAttribute('mcp.method.name', method);
    if (tool) {
      span.setAttribute('gen_ai.tool.name', tool);
      span.setAttribute('gen_ai.operation.name', 'execute_tool');
    }
    if (protocolVersion) span.setAttribute('mcp.protocol.version', protocolVersion.slice(0, 40));
    span.setAttribute('network.transport', 'tcp');
    span.setAttribute('client.address', record.clientAddress);
    if (record.namespace) span.setAttribute('mcp.gateway.namespace', record.namespace);
    if (record.outcome !== 'ok') {
      span.setAttribute('error.type', record.errorCode ?? record.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}
