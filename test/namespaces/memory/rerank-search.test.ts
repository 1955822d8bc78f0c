/**
 * The rerank stage over real MCP calls: a real gateway (keyword first stage, SQLite in a
 * temporary DATA_DIR), the official MCP SDK client over HTTP, and the loopback rerank
 * contract server. The reranker reorders the first stage's top N and nothing else; when it
 * times out, answers 5xx, the wrong shape or a NaN score, the search answers in first-stage
 * order and `degraded` says why, also when it stalls mid-answer while garbage is collected;
 * metrics count each outcome; the key never shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GatewayMetrics } from '../../../gateway/ops/metrics.ts';
import type { Fault } from '../../support/contracts/loopback.ts';
import { overlapScore, type RerankContract, startRerankContract } from '../../support/contracts/rerank.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { whileCollecting } from '../../support/gc.ts';

const KEY = 'rk-search-secret-9876543210';
const QUERY = 'deploy the staging cluster';
const MEMORIES = [
  'Deploy the staging cluster every Friday after the review',
  'The staging cluster runs in Frankfurt',
  'We deploy the mobile app on Mondays',
  'Cluster upgrades need a staging check before any deploy',
  'Staging notes live in the team wiki',
];

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field below
type Json = Record<string, any>;

let contract: RerankContract;
let gw: TestGateway;
let client: Client;
let metrics: GatewayMetrics;
const logLines: string[] = [];

async function connect(gateway: TestGateway): Promise<Client> {
  const mcp = new Client({ name: 'rerank-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': gateway.apiKey } },
    }),
  );
  return mcp;
}

async function ok(mcp: Client, name: string, args: Json = {}): Promise<Json> {
  const result = await mcp.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  const text = JSON.stringify(result);
  assert.ok(!text.includes(KEY), `${name} showed the rerank key`);
  return result.structuredContent as Json;
}

async function counts(): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric('mcp_memory_rerank_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

const ids = (result: Json) => result.hits.map((hit: Json) => hit.id as string);

before(async () => {
  contract = await startRerankContract({ apiKey: KEY });
  metrics = new GatewayMetrics({ processMetrics: false });
  gw = await startTestGateway({
    metrics,
    logDestination: { write: (line: string) => void logLines.push(line) },
    env: {
      LOG_LEVEL: 'debug',
      MEMORY_EMBEDDINGS: 'none',
      MEMORY_RERANKER: 'http',
      MEMORY_RERANK_URL: contract.cohereUrl,
      MEMORY_RERANK_MODEL: 'rerank-v3.5',
      MEMORY_RERANK_API_KEY: KEY,
      MEMORY_RERANK_TOP_N: '3',
      MEMORY_RERANK_TIMEOUT_MS: '3000',
    },
  });
  client = await connect(gw);
  for (const content of MEMORIES) await ok(client, 'memory_write', { content });
});

after(async () => {
  await client?.close();
  await gw?.close();
  await contract?.close();
});

describe('memory_search with an http reranker', () => {
  let firstStage: string[];
  let firstStageAnswer: Json;
  const content = new Map<string, string>();

  test('a 5xx keeps the first-stage order and says so; the note and weak flags are the first stage’s', async () => {
    contract.server.faults.push({ match: 'POST /v1/rerank', status: 503 });
    const result = await ok(client, 'memory_search', { query: QUERY, limit: 5 });
    assert.match(
      result.degraded,
      /reranking skipped: the reranker answered HTTP 503; hits are in first-stage order/,
    );
    assert.equal(result.hits.length, 5);
    for (const hit of result.hits) {
      assert.equal(hit.rerank_score, undefined);
      content.set(hit.id, hit.content);
    }
    const relevance = result.hits.map((hit: Json) => hit.relevance);
    assert.deepEqual(
      relevance,
      [...relevance].sort((a, b) => b - a),
      'first-stage order is by relevance',
    );
    firstStage = ids(result);
    firstStageAnswer = result;
  });

  test('the reranker reorders the top N by its scores, leaves the rest and the calibrated fields as they were', async () => {
    // Scores that reverse the first stage's top three.
    const rank = new Map(firstStage.map((id, i) => [content.get(id)!, i]));
    contract.score = (_query, document) => (rank.get(document) ?? 0) / 10;
    contract.bodies.length = 0;
    try {
      const result = await ok(client, 'memory_search', { query: QUERY, limit: 5 });
      assert.equal(result.degraded, undefined);
      assert.deepEqual(ids(result), [
        firstStage[2],
        firstStage[1],
        firstStage[0],
        firstStage[3],
        firstStage[4],
      ]);
      assert.deepEqual(
        result.hits.map((hit: Json) => hit.rerank_score),
        [0.2, 0.1, 0, undefined, undefined],
      );
      assert.deepEqual(contract.bodies[0]?.body, {
        model: 'rerank-v3.5',
        query: QUERY,
        documents: firstStage.slice(0, 3).map((id) => content.get(id)),
        top_n: 3,
      });
      for (const field of ['best_relevance', 'weak', 'note', 'total_memories'])
        assert.deepEqual(result[field], firstStageAnswer[field], field);
      const byId = new Map(firstStageAnswer.hits.map((hit: Json) => [hit.id, hit]));
      for (const hit of result.hits) {
        const before = byId.get(hit.id) as Json;
        assert.deepEqual([hit.relevance, hit.weak], [before.relevance, before.weak]);
      }
      // A limit under N still reranks N, then cuts.
      const two = await ok(client, 'memory_search', { query: QUERY, limit: 2 });
      assert.deepEqual(ids(two), [firstStage[2], firstStage[1]]);
      assert.equal(contract.bodies[1]?.body.top_n, 3);
    } finally {
      contract.score = overlapScore;
    }
  });

  test('a timeout, a wrong shape and a NaN score each keep the first-stage order, naming why', async () => {
    const cases: Array<[() => void, RegExp]> = [
      [
        () => contract.server.faults.push({ match: 'POST /v1/rerank', hang: true }),
        /the reranker did not answer within 3000 ms/,
      ],
      [
        () => contract.server.faults.push({ match: 'POST /v1/rerank', status: 200, body: '{"data": []}' }),
        /the reranker's answer is not the cohere shape/,
      ],
      [
        () => {
          contract.score = () => Number.NaN;
        },
        /score for document \d is NaN or missing/,
      ],
    ];
    try {
      for (const [arrange, why] of cases) {
        arrange();
        // Collections during the wait: a deadline held only weakly would be lost (gc.ts).
        const result = await whileCollecting(ok(client, 'memory_search', { query: QUERY, limit: 5 }));
        assert.match(result.degraded, why);
        assert.match(result.degraded, /hits are in first-stage order/);
        assert.deepEqual(ids(result), firstStage);
        assert.ok(result.hits.every((hit: Json) => hit.rerank_score === undefined));
      }
    } finally {
      contract.score = overlapScore;
    }
  });

  test('metrics count every outcome; stats and capabilities name the reranker; the key is in no log line', async () => {
    const seen = await counts();
    assert.ok((seen.ok ?? 0) >= 2, JSON.stringify(seen));
    for (const outcome of ['http_status', 'timeout', 'bad_shape', 'bad_score'])
      assert.equal(seen[outcome], 1, `${outcome}: ${JSON.stringify(seen)}`);
    const stats = await ok(client, 'memory_stats');
    assert.deepEqual(stats.reranker, {
      kind: 'http',
      active: true,
      api: 'cohere',
      model: 'rerank-v3.5',
      top_n: 3,
      problem: null,
    });
    const capabilities = await ok(client, 'memory_capabilities');
    assert.equal(capabilities.settings.reranker, 'http');
    assert.equal(capabilities.settings.rerank_model, 'rerank-v3.5');
    assert.equal(capabilities.settings.rerank_top_n, 3);
    assert.ok(
      logLines.some((line) => line.includes('rerank')),
      'the debug log speaks of reranking',
    );
    assert.ok(!logLines.some((line) => line.includes(KEY)), 'a log line holds the rerank key');
  });

  test('searches at once against a reranker that stalls every way each answer in first-stage order; the next one reranks', async () => {
    const stalls: Fault[] = [
      { match: 'POST /v1/rerank', hang: true },
      { match: 'POST /v1/rerank', stall: 'silence' },
      { match: 'POST /v1/rerank', stall: 'half', body: '{"results": [{"index": 0, "relevance_score": 1}]}' },
      { match: 'POST /v1/rerank', stall: 'trickle' },
      { match: 'POST /v1/rerank', reset: true },
    ];
    contract.server.faults.push(...stalls);
    const searches = stalls.map(() => ok(client, 'memory_search', { query: QUERY, limit: 5 }));
    const results = await whileCollecting(Promise.all(searches));
    for (const result of results) {
      assert.deepEqual(ids(result), firstStage);
      // The reset is "could not be reached", unless its request had not reached the server by the deadline.
      assert.match(
        result.degraded,
        /reranking skipped: the reranker (did not answer within 3000 ms|could not be reached); hits are in first-stage order/,
      );
    }
    // No stalled connection is left open, nor for the next call to queue behind.
    await whileCollecting(contract.server.released());
    contract.server.faults.length = 0;
    const next = await whileCollecting(ok(client, 'memory_search', { query: QUERY, limit: 5 }));
    assert.equal(next.degraded, undefined);
    assert.ok(next.hits.some((hit: Json) => hit.rerank_score !== undefined));
  });
});

describe('a bad rerank setting', () => {
  test('turns reranking off with SETTINGS_INVALID naming it; writes, reads, lists and search still work', async () => {
    const bad = await startTestGateway({
      env: {
        MEMORY_EMBEDDINGS: 'none',
        MEMORY_RERANKER: 'http',
        MEMORY_RERANK_URL: 'localhost:8080/rerank',
        MEMORY_RERANK_MODEL: 'rerank-v3.5',
      },
    });
    const mcp = await connect(bad);
    try {
      const written = await ok(mcp, 'memory_write', { content: 'The staging cluster runs in Frankfurt' });
      await ok(mcp, 'memory_write', { content: 'Deploy the staging cluster on Fridays' });
      assert.equal((await ok(mcp, 'memory_get', { id: written.id })).id, written.id);
      assert.equal((await ok(mcp, 'memory_list')).memories.length, 2);
      const result = await ok(mcp, 'memory_search', { query: QUERY });
      assert.equal(result.hits.length, 2);
      assert.match(result.degraded, /reranking is off \(SETTINGS_INVALID: MEMORY_RERANK_URL: needs a scheme/);
      const capabilities = await ok(mcp, 'memory_capabilities');
      assert.ok(
        capabilities.problems.some((line: string) => /^MEMORY_RERANK_URL: .*SETTINGS_INVALID/.test(line)),
        JSON.stringify(capabilities.problems),
      );
      assert.equal(capabilities.ready, true, 'the rest of memory is ready');
      const stats = await ok(mcp, 'memory_stats');
      assert.equal(stats.reranker.active, false);
      assert.match(stats.reranker.problem, /^SETTINGS_INVALID: MEMORY_RERANK_URL/);
    } finally {
      await mcp.close();
      await bad.close();
    }
  });
});
