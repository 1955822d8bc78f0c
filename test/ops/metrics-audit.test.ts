/**
 * The ops listener of a real gateway process (two uWS listener threads, a real broker
 * worker, real Kafka): one scrape covers both threads and the worker, labels stay bounded,
 * /readyz follows the worker going away and coming back, and the audit trail records tool
 * calls and refusals without secrets, reopening its file on SIGHUP.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorker } from '../broker-worker/support/worker-process.ts';
import { callTool } from '../support/event-stack.ts';
import { runGatewayToExit, startGatewayProcess } from '../support/gateway-process.ts';
import { freePort, mintKey, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { labelValues, parsePrometheus, total } from '../support/prometheus-text.ts';

function rpc(url: string, key: string | null, method: string, params?: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      connection: 'close',
      ...(key === null ? {} : { 'x-api-key': key }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, ...(params ? { params } : {}) }),
  });
}

interface Readiness {
  ready: boolean;
  draining: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
}

async function readyz(opsUrl: string): Promise<{ status: number; body: Readiness }> {
  const response = await fetch(`${opsUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness };
}

test('one scrape, readiness and the audit trail of a two-thread gateway with its broker worker', async () => {
  const kafka = testKafka();
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-ops-'));
  const auditPath = join(dataDir, 'audit', 'audit.log');
  const plain = mintKey(dataDir, 'fleet', 'ops@example.com');
  const limited = mintKey(dataDir, 'limited', null, {
    limits: { rate: { count: 1, per: 'min' }, burst: 2, quotas: { event: 1 } },
  });
  const workerEnv = {
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  };
  let worker = await startWorker(workerEnv);
  const port = await freePort();
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: worker.address,
    PORT: String(port),
    HTTP_ENGINE: 'uws',
    GATEWAY_THREADS: '2',
    METRICS_PORT: '0',
    AUDIT_LOG: `file:${auditPath}`,
  });
  try {
    const opsLine = await waitFor(
      async () => gateway.lines.find((line) => line.includes('ops listener on http://')),
      { what: 'the ops listener', timeoutMs: 30_000, intervalMs: 50 },
    );
    const opsUrl = `http://127.0.0.1:${opsLine.match(/ops listener on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]}`;
    const topic = `ops-${randomUUID()}`;
    const secretValue = `payload-${randomUUID()}`;

    const client = new Client({ name: 'ops-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/event/mcp`), {
        requestInit: { headers: { 'X-API-Key': plain.key } },
      }),
    );
    const created = await callTool(client, 'event_create_topic', { topic, replication_factor: 1 });
    assert.equal(created.isError, false, created.text);
    const sent = await callTool(client, 'event_publish', { topic, value: secretValue });
    assert.equal(sent.isError, false, sent.text);
    await client.close();

    // A connection per request, many at once, so the kernel spreads them over both threads.
    const listed = await Promise.all(
      Array.from({ length: 40 }, () => rpc(`${gateway.url}/memory/mcp`, plain.key, 'tools/list')),
    );
    assert.deepEqual([...new Set(listed.map((response) => response.status))], [200]);
    await rpc(`${gateway.url}/event/mcp`, plain.key, 'tools/call', {
      name: 'no_such_tool_zz',
      arguments: {},
    });
    assert.equal((await rpc(`${gateway.url}/event/mcp`, null, 'tools/list')).status, 401);
    assert.equal(
      (await rpc(`${gateway.url}/event/mcp`, 'mcp_notregisteredatall0000000000000', 'tools/list')).status,
      401,
    );
    const publish = { name: 'event_publish', arguments: { topic, value: secretValue } };
    const first = await (await rpc(`${gateway.url}/event/mcp`, limited.key, 'tools/call', publish)).json();
    assert.match(JSON.stringify(first), /"structuredContent"/);
    const second = await (await rpc(`${gateway.url}/event/mcp`, limited.key, 'tools/call', publish)).json();
    assert.match(JSON.stringify(second), /quota_exceeded/);
    assert.equal((await rpc(`${gateway.url}/event/mcp`, limited.key, 'tools/call', publish)).status, 429);

    // Only /healthz opens on the public port.
    assert.equal((await fetch(`${gateway.url}/metrics`)).status, 401);
    const withKey = { headers: { 'x-api-key': plain.key } };
    assert.equal((await fetch(`${gateway.url}/metrics`, withKey)).status, 404);
    assert.equal((await fetch(`${gateway.url}/readyz`, withKey)).status, 404);

    const scrape = await fetch(`${opsUrl}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(scrape.headers.get('content-type') ?? '', /text\/plain/);
    const text = await scrape.text();
    const families = parsePrometheus(text);
    const listedOk = { namespace: 'memory', method: 'tools/list', status: 'ok' };
    assert.equal(total(families, 'mcp_requests_total', listedOk), 40, 'both threads counted in one scrape');
    // The parser keeps no labels of a labelled histogram's samples: its family is checked here.
    assert.equal(families.get('mcp_request_duration_seconds')?.type, 'HISTOGRAM');
    const published = { namespace: 'event', method: 'tools/call', tool: 'event_publish' };
    assert.equal(total(families, 'mcp_requests_total', { ...published, status: 'ok' }), 2);
    assert.equal(total(families, 'mcp_requests_total', { ...published, status: 'quota_exceeded' }), 1);
    assert.equal(
      total(families, 'mcp_requests_total', { method: 'tools/call', tool: 'unknown', status: 'error' }),
      1,
    );
    // The keyless MCP call and the keyless GET /metrics on the public port.
    assert.equal(total(families, 'mcp_auth_failures_total', { reason: 'missing' }), 2);
    assert.equal(total(families, 'mcp_auth_failures_total', { reason: 'unregistered' }), 1);
    assert.equal(total(families, 'mcp_rate_limited_total', { namespace: 'event' }), 1);
    assert.equal(total(families, 'mcp_quota_exceeded_total', { namespace: 'event' }), 1);
    assert.equal(families.get('mcp_inflight_requests')?.type, 'GAUGE');
    assert.equal(total(families, 'mcp_inflight_requests'), 0);
    // The broker worker's own counts, answered over IPC inside the same scrape.
    assert.equal(total(families, 'mcp_broker_publish_total', { outcome: 'ok' }), 2);
    assert.equal(total(families, 'mcp_broker_publish_duration_seconds'), 2);
    assert.ok(families.has('mcp_broker_polls_total') && families.has('mcp_broker_ipc_queue_depth'));
    assert.ok(families.has('process_cpu_user_seconds_total'), 'gateway process metrics');
    assert.ok(families.has('broker_worker_process_cpu_user_seconds_total'), 'worker process metrics');
    // Bounded labels: no key ids, no secrets, no invented tool names.
    for (const secret of [plain.id, plain.key, limited.id, limited.key, 'no_such_tool_zz', secretValue])
      assert.ok(!text.includes(secret), `the scrape holds ${secret}`);
    assert.ok(
      labelValues(families, 'mcp_requests_total', 'tool').every((tool) =>
        /^(event_\w+|unknown|)$/.test(tool),
      ),
    );

    const ready = await readyz(opsUrl);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.deepEqual(Object.keys(ready.body.checks).sort(), [
      'broker_worker',
      'namespace_memory',
      'state_store',
    ]);
    await worker.stop();
    const down = await waitFor(
      async () => {
        const answer = await readyz(opsUrl);
        return answer.status === 503 ? answer : undefined;
      },
      { what: 'readiness to fail', timeoutMs: 30_000, intervalMs: 50 },
    );
    assert.equal(down.body.checks.broker_worker?.ok, false);
    assert.equal(down.body.checks.state_store?.ok, true);
    // The same checks as gauges, run by the scrape itself (what McpBrokerWorkerUnreachable reads).
    const downScrape = parsePrometheus(await (await fetch(`${opsUrl}/metrics`)).text());
    assert.equal(total(downScrape, 'mcp_ready'), 0);
    assert.equal(total(downScrape, 'mcp_readiness_check_ok', { check: 'broker_worker' }), 0);
    assert.equal(total(downScrape, 'mcp_readiness_check_ok', { check: 'state_store' }), 1);
    worker = await startWorker(workerEnv, { address: worker.address });
    await waitFor(async () => ((await readyz(opsUrl)).status === 200 ? true : undefined), {
      what: 'readiness to return',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const upScrape = parsePrometheus(await (await fetch(`${opsUrl}/metrics`)).text());
    assert.equal(total(upScrape, 'mcp_ready'), 1);
    assert.equal(total(upScrape, 'mcp_readiness_check_ok', { check: 'broker_worker' }), 1);

    const lines = (await readFile(auditPath, 'utf8')).trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const secret of [plain.key, limited.key, secretValue])
      assert.ok(!lines.some((line) => line.includes(secret)), `the audit trail holds ${secret}`);
    const okPublish = records.find((r) => r.tool === 'event_publish' && r.keyId === plain.id);
    assert.ok(okPublish, lines.join('\n'));
    assert.equal(okPublish.outcome, 'ok');
    assert.equal(okPublish.namespace, 'event');
    assert.equal(okPublish.method, 'tools/call');
    assert.equal(typeof okPublish.owner, 'string');
    assert.equal(okPublish.traceId, null);
    assert.equal(okPublish.errorCode, null);
    assert.match(String(okPublish.clientAddress), /127\.0\.0\.1/);
    assert.equal(typeof okPublish.durationMs, 'number');
    assert.ok(!Number.isNaN(Date.parse(String(okPublish.time))));
    const outcomes = records.filter((r) => r.keyId === limited.id).map((r) => [r.outcome, r.errorCode]);
    assert.deepEqual(outcomes, [
      ['ok', null],
      ['quota_exceeded', 'quota_exceeded'],
      ['rate_limited', 'rate_limited'],
    ]);
    const refusedKeys = records.filter((r) => r.outcome === 'denied').map((r) => [r.keyId, r.errorCode]);
    assert.deepEqual(refusedKeys, [
      [null, 'unauthorized_missing'],
      [null, 'unauthorized_unregistered'],
      [null, 'unauthorized_missing'],
    ]);
    assert.ok(
      !records.some((r) => r.method === 'tools/list'),
      'tools/list is neither a tool call nor refused',
    );

    // logrotate: move the file away, SIGHUP, and the next line starts a new file at the path.
    await rename(auditPath, `${auditPath}.1`);
    gateway.child.kill('SIGHUP');
    await waitFor(
      async () => {
        await rpc(`${gateway.url}/event/mcp`, plain.key, 'tools/call', {
          name: 'event_topics',
          arguments: {},
        });
        const fresh = await readFile(auditPath, 'utf8').catch(() => '');
        return fresh.includes('event_topics') ? true : undefined;
      },
      { what: 'a reopened audit file', timeoutMs: 30_000, intervalMs: 50 },
    );
    // The last line written before a stop is on disk once the gateway has exited.
    await rpc(`${gateway.url}/event/mcp`, plain.key, 'tools/call', {
      name: 'event_capabilities',
      arguments: {},
    });
    assert.equal(await gateway.stop(), 0, gateway.lines.join('\n'));
    assert.match(await readFile(auditPath, 'utf8'), /"tool":"event_capabilities"/);
  } finally {
    await gateway.stop();
    await worker.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a malformed METRICS_PORT or AUDIT_LOG stops start-up naming the setting and its form', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-ops-bad-'));
  try {
    const badPort = await runGatewayToExit({ DATA_DIR: dataDir, METRICS_PORT: 'ninety' });
    assert.equal(badPort.code, 1);
    assert.match(badPort.output, /METRICS_PORT: must be a port number from 0 to 65535/);
    const badAudit = await runGatewayToExit({ DATA_DIR: dataDir, AUDIT_LOG: 'syslog' });
    assert.equal(badAudit.code, 1);
    assert.match(badAudit.output, /AUDIT_LOG: "syslog" is not an audit target; use stdout or file:/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
