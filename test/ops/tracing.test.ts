/**
 * Traces from a real gateway process to a loopback OTLP/HTTP receiver that decodes what
 * arrives: one SERVER span per MCP request, named `{method} {tool}`, continuing the
 * caller's `traceparent`, and the same trace id in the audit trail; a publish's trace
 * continues across the IPC link into the broker worker and onto the Kafka record.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createTopic, uniqueName } from '../broker-worker/support/kafka.ts';
import { startWorker } from '../broker-worker/support/worker-process.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { attributesOf, SPAN_KIND, startOtlpReceiver } from '../support/otlp-receiver.ts';

/** An event tool call whose HTTP request carries a fresh caller trace context. */
async function tracedToolCall(url: string, key: string, name: string, args: Record<string, unknown>) {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  const answer = await fetch(`${url}/event/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      traceparent: `00-${traceId}-${parentId}-01`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { traceId, parentId, answer };
}

test('a server span per MCP request continues traceparent and reaches an OTLP/HTTP receiver', async () => {
  const receiver = await startOtlpReceiver();
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-trace-'));
  const auditPath = join(dataDir, 'audit.log');
  const { key } = mintKey(dataDir, 'traced');
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    AUDIT_LOG: `file:${auditPath}`,
  });
  try {
    const { traceId, parentId, answer } = await tracedToolCall(gateway.url, key, 'event_capabilities', {});
    assert.equal(answer.status, 200);
    await answer.arrayBuffer();

    const [span] = await receiver.waitFor(
      (candidate) => candidate.traceId === traceId && candidate.parentSpanId === parentId,
    );
    assert.ok(span, 'the span reached the receiver');
    assert.equal(span.name, 'tools/call event_capabilities');
    assert.equal(span.parentSpanId, parentId);
    assert.equal(span.kind, SPAN_KIND.SERVER);
    assert.equal(span.service, 'gateway-under-test');
    const attributes = attributesOf(span);
    assert.equal(attributes['mcp.method.name'], 'tools/call');
    assert.equal(attributes['gen_ai.tool.name'], 'event_capabilities');
    assert.equal(attributes['gen_ai.operation.name'], 'execute_tool');

    const line = await waitFor(
      async () => {
        const text = (await readFile(auditPath, 'utf8').catch(() => '')).trim();
        return text
          ? (JSON.parse(text.split('\n').at(-1)!) as { tool: string; traceId: string | null })
          : undefined;
      },
      { what: 'a line in the audit file', timeoutMs: 30_000 },
    );
    assert.equal(line?.tool, 'event_capabilities');
    assert.equal(line?.traceId, traceId);
  } finally {
    await gateway.stop();
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('spans cross the IPC link into the broker worker, and the produced record carries traceparent', async () => {
  const kafka = testKafka();
  const receiver = await startOtlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' };
  const worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    ...otel,
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-trace-ipc-'));
  const { key } = mintKey(dataDir, 'traced');
  const gateway = await startGatewayProcess({ DATA_DIR: dataDir, BROKER_WORKERS: worker.address, ...otel });
  const topic = uniqueName('traced');
  try {
    await createTopic(kafka.plaintext, topic);
    const { traceId, parentId, answer } = await tracedToolCall(gateway.url, key, 'event_publish', {
      topic,
      value: 'traced message',
    });
    assert.equal(answer.status, 200);
    const body = (await answer.json()) as { result: { isError?: boolean } };
    assert.notEqual(body.result.isError, true, JSON.stringify(body));

    // gateway SERVER -> gateway CLIENT (IPC) -> worker SERVER -> worker PRODUCER, one trace.
    const spans = await receiver.waitFor((span) => span.traceId === traceId, 4);
    const byName = (name: string) => spans.find((span) => span.name === name);
    const server = byName('tools/call event_publish');
    const client = byName('broker-worker/publish');
    const workerSpans = spans.filter((span) => span.name === 'broker-worker/publish');
    const producer = byName(`send ${topic}`);
    assert.ok(server && client && producer, spans.map((s) => s.name).join(', '));
    const workerServer = workerSpans.find((span) => span.kind === SPAN_KIND.SERVER);
    const gatewayClient = workerSpans.find((span) => span.kind === SPAN_KIND.CLIENT);
    assert.ok(workerServer && gatewayClient, 'a CLIENT span in the gateway and a SERVER span in the worker');
    assert.equal(server.parentSpanId, parentId);
    assert.equal(gatewayClient.parentSpanId, server.spanId);
    assert.equal(workerServer.parentSpanId, gatewayClient.spanId);
    assert.equal(producer.parentSpanId, workerServer.spanId);
    assert.equal(producer.kind, SPAN_KIND.PRODUCER);
    assert.equal(server.service, 'mcp-gateway');
    assert.equal(workerServer.service, 'mcp-broker-worker');
    const attributes = attributesOf(producer);
    assert.equal(attributes['messaging.system'], 'kafka');
    assert.equal(attributes['messaging.destination.name'], topic);

    // The record itself, read with kafkajs outside the gateway, names the PRODUCER span.
    const headers = await firstRecordHeaders(kafka.plaintext, topic);
    assert.equal(headers.traceparent, `00-${traceId}-${producer.spanId}-01`);
  } finally {
    await gateway.stop();
    await worker.stop();
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

async function firstRecordHeaders(bootstrap: string, topic: string): Promise<Record<string, string>> {
  const consumer = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).consumer({
    groupId: uniqueName('trace-reader'),
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const headers = await new Promise<Record<string, string>>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        resolve(
          Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
          ),
        );
      },
    });
  });
  await consumer.disconnect();
  return headers;
}
