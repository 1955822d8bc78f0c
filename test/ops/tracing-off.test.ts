/**
 * Tracing off costs nothing because none of its code loads: a gateway with no
 * OTEL_EXPORTER_OTLP_ENDPOINT serves MCP requests without loading any OpenTelemetry
 * module (ES or CommonJS). The same witness sees them load once an endpoint is set, so
 * an empty record means "not loaded", not "not watched".
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey } from '../support/harness.ts';
import { BASE } from '../support/raw-mcp.ts';
import { moduleWitness } from '../support/witness.ts';

/** Starts a gateway with the witness, makes two MCP calls, stops it; returns what it saw load. */
async function openTelemetryLoaded(extraEnv: Record<string, string>): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tracing-off-'));
  const { env, loaded } = moduleWitness(dataDir, '@opentelemetry');
  const { key } = mintKey(dataDir, 'witnessed');
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    ...env,
    ...extraEnv,
  });
  try {
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'event_capabilities', arguments: {} } },
    ]) {
      const response = await fetch(`${gateway.url}/event/mcp`, {
        method: 'POST',
        headers: { ...BASE, 'x-api-key': key },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, `${body.method} answered`);
      await response.arrayBuffer();
    }
  } finally {
    await gateway.stop();
  }
  const lines = await loaded();
  await rm(dataDir, { recursive: true, force: true });
  return lines;
}

test('with no OTLP endpoint set, serving MCP requests loads no OpenTelemetry module', async () => {
  assert.deepEqual(await openTelemetryLoaded({}), []);
});

test('the witness sees OpenTelemetry load once an endpoint is set', async () => {
  const loaded = await openTelemetryLoaded({
    // Nothing listens there: spans fail to export, which the gateway tolerates.
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    OTEL_TRACES_SAMPLER: 'always_off',
  });
  assert.ok(
    loaded.some((line) => line.includes('@opentelemetry/sdk-trace-base')),
    `the SDK was seen loading: ${loaded.slice(0, 5).join(', ')}`,
  );
});
