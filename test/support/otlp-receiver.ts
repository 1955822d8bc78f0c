/** A loopback OTLP/HTTP (JSON) receiver that keeps every span it is sent, decoded. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './harness.ts';

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
  /** The exporting process's service.name (from the resource). */
  service?: string;
}
interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeSpans: Array<{ spans: OtlpSpan[] }>;
  }>;
}

export const SPAN_KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4 } as const;

export interface OtlpReceiver {
  endpoint: string;
  spans(): OtlpSpan[];
  /** Waits until `match` finds `count` spans (30 s at most) and returns them. */
  waitFor(match: (span: OtlpSpan) => boolean, count?: number): Promise<OtlpSpan[]>;
  close(): Promise<void>;
}

/** A span's attributes as plain values. */
export function attributesOf(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: OtlpSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && /json/.test(request.headers['content-type'] ?? '')) {
        const batch = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const resourceSpans of batch.resourceSpans) {
          const service = resourceSpans.resource.attributes.find((a) => a.key === 'service.name')?.value
            .stringValue as string | undefined;
          for (const scope of resourceSpans.scopeSpans)
            for (const span of scope.spans) received.push(service ? { ...span, service } : span);
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...received],
    waitFor(match, count = 1) {
      return waitFor(
        () => {
          const found = received.filter(match);
          return found.length >= count ? found : undefined;
        },
        {
          what: () =>
            `${count} matching spans at the OTLP receiver; it holds: ${received.map((s) => s.name).join(', ')}`,
          timeoutMs: 30_000,
        },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
