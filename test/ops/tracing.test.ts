/**
 * Traces from a real gateway process to a loopback OTLP/HTTP receiver that decodes what
 * arrives: one SERVER span per MCP request, named `{method} {tool}`, continuing the
 * caller's `traceparent`, and the same trace id in the audit trail.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { keyStorePath } from '../../gateway/server.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}
interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeSpans: Array<{ spans: OtlpSpan[] }>;
  }>;
}

test('a server span per MCP request continues traceparent and reaches an OTLP/HTTP receiver', async () => {
  const received: OtlpExport[] = [];
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && /json/.test(request.headers['content-type'] ?? ''))
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-trace-'));
  const auditPath = join(dataDir, 'audit.log');
  const store = new ApiKeyStore(keyStorePath(dataDir));
  const { key } = store.create('traced');
  store.close();
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    AUDIT_LOG: `file:${auditPath}`,
  });
  try {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const answer = await fetch(`${gateway.url}/event/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key,
        traceparent: `00-${traceId}-${parentId}-01`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'event_capabilities', arguments: {} },
      }),
    });
    assert.equal(answer.status, 200);
    await answer.arrayBuffer();

    let span: OtlpSpan | undefined;
    let service: unknown;
    for (const deadline = Date.now() + 30_000; !span && Date.now() < deadline; ) {
      for (const batch of received)
        for (const resourceSpans of batch.resourceSpans)
          for (const scope of resourceSpans.scopeSpans)
            for (const candidate of scope.spans)
              if (candidate.traceId === traceId) {
                span = candidate;
                service = resourceSpans.resource.attributes.find((a) => a.key === 'service.name')?.value;
              }
      if (!span) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(span, 'the span reached the receiver');
    assert.equal(span.name, 'tools/call event_capabilities');
    assert.equal(span.parentSpanId, parentId);
    assert.equal(span.kind, 2, 'SPAN_KIND_SERVER');
    assert.deepEqual(service, { stringValue: 'gateway-under-test' });
    const attributes = Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    assert.equal(attributes['mcp.method.name'], 'tools/call');
    assert.equal(attributes['gen_ai.tool.name'], 'event_capabilities');
    assert.equal(attributes['gen_ai.operation.name'], 'execute_tool');

    let line: { tool: string; traceId: string | null } | undefined;
    for (const deadline = Date.now() + 30_000; !line && Date.now() < deadline; ) {
      const text = (await readFile(auditPath, 'utf8').catch(() => '')).trim();
      line = text ? (JSON.parse(text.split('\n').at(-1)!) as typeof line) : undefined;
      if (!line) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(line?.tool, 'event_capabilities');
    assert.equal(line?.traceId, traceId);
  } finally {
    await gateway.stop();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
