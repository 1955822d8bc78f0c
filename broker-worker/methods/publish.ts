import { type PublishResult, publishInput } from '../../shared/event/schemas.ts';
import { currentCarrier, inSpan, otelApi, type TraceCarrier, tracingStarted } from '../../shared/tracing.ts';
import type { CallContext } from '../ipc/server.ts';
import { type MethodContext, topicCall } from './context.ts';

export async function publish(
  ctx: MethodContext,
  params: unknown,
  call: CallContext,
): Promise<PublishResult> {
  const { input, clients, topic } = topicCall(ctx, publishInput, params);
  const partitions = await clients.topics.requireExists(topic);
  const send = (headers: Record<string, string> | undefined) =>
    clients.publisher.publish(
      { topic, value: input.value, key: input.key, headers },
      partitions,
      async () => {
        clients.topics.invalidate();
        try {
          await clients.topics.requireExists(topic);
          return true;
        } catch {
          return false;
        }
      },
    );

  // Tracing off here: no span can be active, and @opentelemetry/api stays unloaded.
  if (!tracingStarted()) return send(withTraceContext(input.headers, call.trace));
  const { context, SpanKind, trace } = otelApi();
  const active = context.active();
  if (!trace.getSpan(active)) return send(withTraceContext(input.headers, call.trace));
  // Tracing on here: a PRODUCER span (messaging conventions) whose context the record carries.
  return inSpan(
    trace.getTracer('mcp-broker-worker'),
    `send ${topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'messaging.destination.name': topic,
      },
    },
    active,
    async (producing, span) => {
      const result = await send(withTraceContext(input.headers, currentCarrier(producing)));
      span.setAttribute('messaging.destination.partition.id', String(result.partition));
      span.setAttribute('messaging.kafka.offset', Number(result.offset));
      return result;
    },
    (error) => (error instanceof Error ? error.name : 'INTERNAL'),
  );
}

/**
 * The record's headers with the W3C trace context added, so a consumer can continue the
 * trace. A `traceparent` or `tracestate` the caller set itself is kept as given.
 */
function withTraceContext(
  headers: Record<string, string> | undefined,
  carrier: TraceCarrier | undefined,
): Record<string, string> | undefined {
  if (!carrier) return headers;
  const taken = new Set(Object.keys(headers ?? {}).map((name) => name.toLowerCase()));
  if (taken.has('traceparent')) return headers;
  const added: Record<string, string> = { ...headers, traceparent: carrier.traceparent };
  if (carrier.tracestate && !taken.has('tracestate')) added.tracestate = carrier.tracestate;
  return added;
}
