/**
 * What metrics and the audit trail make of requests refused before their body is read: a
 * rate limit's 429 and, with RATE_LIMIT_ON_STORE_ERROR=deny and Redis unreachable, a 503.
 * Such a request names its call only in headers the client chose (Mcp-Method, Mcp-Name),
 * so those must not become metric labels, and the refusal must still reach the trail.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { createLogger } from '../../gateway/logger.ts';
import { GatewayMetrics } from '../../gateway/ops/metrics.ts';
import { type RunningGateway, startGateway } from '../../gateway/server.ts';
import { absentBroker } from '../support/gateway.ts';
import { freePort, mintKey } from '../support/harness.ts';
import { labelValues, parsePrometheus, total } from '../support/prometheus-text.ts';

let dataDir: string;
const running: RunningGateway[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-refusal-records-'));
});
after(async () => {
  await Promise.all(running.map((gateway) => gateway.close()));
  await rm(dataDir, { recursive: true, force: true });
});

async function gateway(extra: Record<string, string> = {}) {
  const env = { HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extra };
  const config = loadGatewayConfig(env);
  const metrics = new GatewayMetrics({ processMetrics: false });
  const audit: string[] = [];
  const started = await startGateway({
    config,
    env,
    log: createLogger('silent'),
    broker: absentBroker,
    metrics,
    audit: (line) => audit.push(line),
  });
  running.push(started);
  return { url: `http://127.0.0.1:${started.port}`, metrics, audit };
}

/** A tools/call that names itself in 2026-07-28 headers as well as in its body. */
async function call(url: string, key: string, headers: Record<string, string>, args: unknown) {
  const response = await fetch(`${url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: headers['mcp-name'] ?? 'event_topics', arguments: args },
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

test('a 429 refused from headers counts with bounded labels and is audited without the key or arguments', async () => {
  const gw = await gateway();
  const { key, id } = mintKey(dataDir, 'labels', null, {
    limits: { rate: { count: 1, per: 'min' }, burst: 1 },
  });
  const madeUp = `zz_tool_${randomUUID()}`;
  const method = `x/${randomUUID()}`;
  const secret = `secret-${randomUUID()}`;
  assert.equal(await call(gw.url, key, {}, {}), 200);
  assert.equal(await call(gw.url, key, { 'mcp-method': 'tools/call', 'mcp-name': madeUp }, { secret }), 429);
  assert.equal(await call(gw.url, key, { 'mcp-method': method, 'mcp-name': madeUp }, { secret }), 429);

  const text = await gw.metrics.registry.metrics();
  for (const value of [key, id, madeUp, method, secret])
    assert.ok(!text.includes(value), `a label holds ${value}`);
  const families = parsePrometheus(text);
  assert.ok(
    labelValues(families, 'mcp_requests_total', 'tool').every((tool) => /^(event_\w+|unknown|)$/.test(tool)),
  );
  assert.deepEqual(labelValues(families, 'mcp_requests_total', 'method').sort(), ['other', 'tools/call']);
  assert.equal(total(families, 'mcp_requests_total', { status: 'rate_limited' }), 2);
  assert.equal(total(families, 'mcp_rate_limited_total', { namespace: 'event' }), 2);

  const refused = gw.audit
    .map((line) => JSON.parse(line))
    .filter((record) => record.outcome === 'rate_limited');
  assert.deepEqual(
    refused.map((record) => [record.keyId, record.errorCode]),
    [
      [id, 'rate_limited'],
      [id, 'rate_limited'],
    ],
  );
  for (const value of [key, secret]) assert.ok(!gw.audit.some((line) => line.includes(value)));
});

test('with Redis unreachable and deny, each 503 is counted and audited as a refusal of that key', async () => {
  const gw = await gateway({
    RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    RATE_LIMIT_ON_STORE_ERROR: 'deny',
  });
  const { key, id } = mintKey(dataDir, 'deny', null, { limits: { rate: { count: 10, per: 's' } } });
  assert.equal(await call(gw.url, key, {}, {}), 503);
  assert.equal(await call(gw.url, key, { 'mcp-method': 'tools/call', 'mcp-name': 'event_topics' }, {}), 503);

  const families = parsePrometheus(await gw.metrics.registry.metrics());
  assert.equal(total(families, 'mcp_rate_limit_store_errors_total', { refused: 'true' }), 2);
  const records = gw.audit.map((line) => JSON.parse(line)).filter((record) => record.keyId === id);
  assert.deepEqual(
    records.map((record) => [record.event, record.errorCode]),
    [
      ['mcp_request_refused', 'rate_limit_store_unavailable'],
      ['mcp_tool_call', 'rate_limit_store_unavailable'],
    ],
  );
});
