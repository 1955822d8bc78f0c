/**
 * The gateway's server span per MCP request (the provider itself is set up by
 * shared/tracing.ts, for both processes).
 */
import type { Span, Tracer } from '@opentelemetry/api';
import { otelApi } from '../../shared/tracing.ts';
import type { RequestRecord } from './observer.ts';

/** A server span for one MCP request, continuing an incoming `traceparent`. */
export function startRequestSpan(tracer: Tracer, headers: Record<string, string>): Span {
  const { context, propagation, ROOT_CONTEXT, SpanKind } = otelApi();
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return tracer.startSpan('mcp', { kind: SpanKind.SERVER }, parent ?? context.active());
}

/** Runs `work` with `span` active, so what it starts (the IPC link's spans) hangs off it. */
export function withActiveSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  const { context, trace } = otelApi();
  return context.with(trace.setSpan(context.active(), span), work);
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
    // The semantic conventions' pair: the client, and the hop that connected (a proxy).
    span.setAttribute('network.peer.address', record.peerAddress);
    if (record.namespace) span.setAttribute('mcp.gateway.namespace', record.namespace);
    if (record.outcome !== 'ok') {
      span.setAttribute('error.type', record.errorCode ?? record.outcome);
      span.setStatus({ code: otelApi().SpanStatusCode.ERROR });
    }
  }
  span.end();
}
