/**
 * The alerting rules (deploy/prometheus/alerts.yml) and the dashboard
 * (deploy/grafana/mcp-gateway.json) may name only metrics and labels a running gateway
 * exposes: a rule on a misspelt series never fires, and a panel on one stays empty, with no
 * error anywhere. A real gateway process with its broker worker on real Kafka is driven
 * through every path the two files watch (tool calls and errors, auth failures, rate limit,
 * quota and poll-cap refusals, publishes and polls, a memory write), then scraped once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { startWorker } from '../broker-worker/support/worker-process.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { freePort, mintKey, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { type Exposed, exposedSeries, missingFrom, TARGET_LABELS } from '../support/promql-refs.ts';
import { postToolCall } from '../support/tool-call.ts';

const deploy = join(import.meta.dirname, '..', '..', 'deploy');

async function call(url: string, key: string | null, name: string, args: Record<string, unknown>) {
  const response = await postToolCall(url, key, name, args, {
    headers: { connection: 'close' },
    id: randomUUID(),
  });
  return { status: response.status, text: await response.text() };
}

/** Repeats a call the gateway answered with "retry once the worker is back", a few times. */
async function callWhileWorkerAway(send: () => Promise<{ status: number; text: string }>) {
  let answer = await send();
  for (
    let tries = 1;
    tries < 4 && /Retry once the worker is back|WORKER_UNREACHABLE/.test(answer.text);
    tries++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await send();
  }
  return answer;
}

/** A gateway driven through every family the rules and the dashboard read, and its scrape. */
async function scrapeOfABusyGateway(): Promise<string> {
  const kafka = testKafka();
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-deploy-names-'));
  const plain = mintKey(dataDir, 'plain', 'ops@example.com');
  const limited = mintKey(dataDir, 'limited', null, {
    limits: { rate: { count: 1, per: 'min' }, burst: 2, quotas: { memory: 1 } },
  });
  const poller = mintKey(dataDir, 'poller', null, { limits: { maxPolls: 1 } });
  const worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    BROKER_ALLOW_TOPIC_ADMIN: 'true',
  });
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: worker.address,
    PORT: String(await freePort()),
    METRICS_PORT: '0',
    // Keyword-only memory: the backlog gauge is read all the same, without loading a model.
    MEMORY_EMBEDDINGS: 'none',
  });
  try {
    const opsLine = await waitFor(
      async () => gateway.lines.find((l) => l.includes('ops listener on http://')),
      {
        what: 'the ops listener',
        timeoutMs: 30_000,
        intervalMs: 50,
      },
    );
    const opsUrl = `http://127.0.0.1:${opsLine.match(/ops listener on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]}`;
    const event = `${gateway.url}/event/mcp`;
    const memory = `${gateway.url}/memory/mcp`;
    const topic = `names-${randomUUID()}`;
    // The worker's first calls load its Kafka code; on a loaded machine that has held its
    // event loop past the link's 2 s keepalive. The gateway then tells the caller to retry
    // once the worker is back, and so does this client (a topic that the lost answer did
    // create is there on the retry).
    const created = await callWhileWorkerAway(() =>
      call(event, plain.key, 'event_create_topic', { topic, replication_factor: 1 }),
    );
    assert.match(created.text, /"structuredContent"|TOPIC_EXISTS/);
    assert.match(
      (await callWhileWorkerAway(() => call(event, plain.key, 'event_publish', { topic, value: 'v' }))).text,
      /"structuredContent"/,
    );
    await call(event, plain.key, 'event_consume', { topic, from: 'earliest', timeout_ms: 200 });
    await call(event, plain.key, 'no_such_tool', {});
    assert.equal((await call(event, null, 'event_publish', { topic, value: 'v' })).status, 401);
    // The poll cap: one long poll holds the key's only place, so a second poll is refused.
    const holding = call(event, poller.key, 'event_consume', { topic, from: 'latest', timeout_ms: 5_000 });
    await waitFor(
      async () => {
        const refused = await call(event, poller.key, 'event_consume', {
          topic,
          from: 'latest',
          timeout_ms: 100,
        });
        return refused.text.includes('too_many_polls') ? true : undefined;
      },
      { what: 'a poll refused by the poll cap', timeoutMs: 20_000, intervalMs: 50 },
    );
    await holding;
    assert.match(
      (await call(memory, plain.key, 'memory_write', { content: 'a note' })).text,
      /"structuredContent"/,
    );
    // Burst 2: the first write passes, the second meets the quota of 1, the third the rate limit.
    await call(memory, limited.key, 'memory_write', { content: 'one' });
    assert.match(
      (await call(memory, limited.key, 'memory_write', { content: 'two' })).text,
      /quota_exceeded/,
    );
    assert.equal((await call(memory, limited.key, 'memory_write', { content: 'three' })).status, 429);
    // A worker that misses a scrape's 2 s is left out of that scrape (by design); the next
    // one that it answers is the one to check.
    return await waitFor(
      async () => {
        const scrape = await fetch(`${opsUrl}/metrics`);
        assert.equal(scrape.status, 200);
        const text = await scrape.text();
        return /^mcp_broker_up /m.test(text) ? text : undefined;
      },
      { what: 'a scrape the broker worker answered', timeoutMs: 30_000, intervalMs: 200 },
    );
  } finally {
    await gateway.stop();
    await worker.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface AlertRule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}

/** Labels an annotation template reads ({{ $labels.namespace }}). */
const templateLabels = (rule: AlertRule) =>
  [
    ...Object.values(rule.annotations ?? {})
      .join(' ')
      .matchAll(/\$labels\.(\w+)/g),
  ].map((m) => m[1]!);

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}

function check(exposed: Exposed) {
  return {
    async rules(): Promise<string[]> {
      const file = parse(await readFile(join(deploy, 'prometheus', 'alerts.yml'), 'utf8')) as {
        groups: Array<{ rules: AlertRule[] }>;
      };
      const rules = file.groups.flatMap((group) => group.rules);
      assert.ok(rules.length >= 10);
      return rules.flatMap((rule) =>
        missingFrom(exposed, rule.expr, templateLabels(rule)).map((p) => `${rule.alert}: ${p}`),
      );
    },
    async dashboard(): Promise<string[]> {
      const dashboard = JSON.parse(await readFile(join(deploy, 'grafana', 'mcp-gateway.json'), 'utf8')) as {
        panels: Panel[];
        templating: { list: Array<{ name: string; definition?: string }> };
      };
      const problems: string[] = [];
      const targets = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((t) => ({ panel, t })));
      assert.ok(targets.length >= 20, `the dashboard has ${targets.length} queries`);
      for (const { panel, t } of targets)
        problems.push(...missingFrom(exposed, t.expr).map((p) => `panel "${panel.title}": ${p}`));
      for (const variable of dashboard.templating.list) {
        const [, metric, label] = variable.definition?.match(/label_values\((\w+),\s*(\w+)\)/) ?? [];
        if (!metric) continue;
        if (!exposed.has(metric)) problems.push(`variable ${variable.name}: no metric ${metric}`);
        else if (!TARGET_LABELS.has(label!) && !exposed.get(metric)!.has(label!))
          problems.push(`variable ${variable.name}: no label ${label} on ${metric}`);
      }
      return problems;
    },
  };
}

test('the alerting rules and the dashboard name only series a running gateway exposes', async () => {
  const text = await scrapeOfABusyGateway();
  const exposed = exposedSeries(text);
  // The series the availability alerts stand on, read at the scrape from a live worker and store.
  assert.match(text, /^mcp_ready 1$/m);
  assert.match(text, /^mcp_readiness_check_ok\{check="broker_worker"\} 1$/m);
  assert.match(text, /^mcp_broker_up 1$/m);
  assert.match(text, /^mcp_namespace_backlog\{namespace="memory"\} \d+$/m);

  const checks = check(exposed);
  assert.deepEqual(await checks.rules(), []);
  assert.deepEqual(await checks.dashboard(), []);

  // The check has teeth: a misspelt metric, label or histogram series is each reported.
  assert.deepEqual(missingFrom(exposed, 'rate(mcp_requests_totl[5m])'), ['no metric mcp_requests_totl']);
  assert.deepEqual(missingFrom(exposed, 'mcp_readiness_check_ok{chek="redis"} == 0'), [
    'no label chek on mcp_readiness_check_ok',
  ]);
  assert.deepEqual(missingFrom(exposed, 'sum by (tool) (rate(mcp_rate_limited_total[5m]))'), [
    'no label tool on any of mcp_rate_limited_total',
  ]);
  assert.deepEqual(
    missingFrom(exposed, 'histogram_quantile(0.99, sum by (le) (rate(mcp_request_duration_seconds[5m])))'),
    ['no metric mcp_request_duration_seconds', 'no label le on any of mcp_request_duration_seconds'],
  );
});
