/**
 * The http reranker's client against a loopback contract server that enforces both shapes
 * (the /rerank body Cohere, Jina, vLLM and Infinity share, and text-embeddings-inference's):
 * what is sent, how each answer is read, and how every bad answer is named.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { type RerankerConfig, rerankSetup } from '../../../gateway/namespaces/memory/rerank/config.ts';
import { httpReranker } from '../../../gateway/namespaces/memory/rerank/http.ts';
import { RerankFailure, type ScoreDocuments } from '../../../gateway/namespaces/memory/rerank/outcome.ts';
import { loadMemorySettings } from '../../../gateway/namespaces/memory/settings.ts';
import {
  overlapScore,
  type RerankContract,
  startRerankContract,
  TEI_MAX_BATCH,
} from '../../support/contracts/rerank.ts';

const KEY = 'rk-contract-secret-0123456789';
let contract: RerankContract;
const silent = pino({ level: 'silent' });
const never = new AbortController().signal;

function client(api: 'cohere' | 'tei', overrides: Partial<Extract<RerankerConfig, { kind: 'http' }>> = {}) {
  return httpReranker(
    {
      kind: 'http',
      api,
      url: api === 'cohere' ? contract.cohereUrl : contract.teiUrl,
      model: 'rerank-test',
      apiKey: KEY,
      timeoutMs: 2000,
      topN: 30,
      ...overrides,
    },
    silent,
  );
}

async function failure(score: ScoreDocuments, documents = ['a b', 'b c', 'c d']): Promise<RerankFailure> {
  try {
    await score('b c', documents, never);
  } catch (error) {
    assert.ok(error instanceof RerankFailure, `not a RerankFailure: ${error}`);
    return error;
  }
  assert.fail('the call should have failed');
}

const post = (url: string, body: string, key: string | null = KEY) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body,
  });

before(async () => {
  contract = await startRerankContract({ apiKey: KEY, teiApiKey: KEY });
});
after(() => contract?.close());

describe('the contract server refuses what the real APIs refuse', () => {
  test('cohere shape: auth 401, not JSON 400, missing or mistyped fields and top_n out of bounds 422', async () => {
    const good = { model: 'm', query: 'q', documents: ['x', 'y'], top_n: 2 };
    assert.equal((await post(contract.cohereUrl, JSON.stringify(good), null)).status, 401);
    assert.equal((await post(contract.cohereUrl, JSON.stringify(good), 'wrong')).status, 401);
    assert.equal((await post(contract.cohereUrl, '{"model":')).status, 400);
    for (const bad of [
      { ...good, model: undefined },
      { ...good, query: 3 },
      { ...good, documents: [] },
      { ...good, documents: ['x', 4] },
      { ...good, top_n: 0 },
      { ...good, top_n: 3 },
      { ...good, top_n: 1.5 },
    ])
      assert.equal((await post(contract.cohereUrl, JSON.stringify(bad))).status, 422, JSON.stringify(bad));
    const ok = await post(contract.cohereUrl, JSON.stringify(good));
    assert.equal(ok.status, 200);
    const body = (await ok.json()) as { results: { index: number; relevance_score: number }[] };
    assert.equal(body.results.length, 2);
  });

  test('tei shape: auth 401, missing query, empty texts, a batch over 32 and mistyped flags 422', async () => {
    const good = { query: 'q', texts: ['x', 'y'] };
    assert.equal((await post(contract.teiUrl, JSON.stringify(good), null)).status, 401);
    for (const bad of [
      { texts: ['x'] },
      { query: 'q', texts: [] },
      { query: 'q', texts: Array.from({ length: TEI_MAX_BATCH + 1 }, (_, i) => `t${i}`) },
      { ...good, truncate: 'yes' },
    ])
      assert.equal((await post(contract.teiUrl, JSON.stringify(bad))).status, 422);
    assert.equal((await post(contract.teiUrl, JSON.stringify(good))).status, 200);
  });
});

describe('the http reranker', () => {
  test('cohere shape: sends model, query, documents and top_n; reads scores back by index', async () => {
    contract.bodies.length = 0;
    const documents = ['alpha beta', 'gamma', 'beta gamma delta', 'delta'];
    const scores = await client('cohere')('beta gamma', documents, never);
    assert.deepEqual(
      scores,
      documents.map((d) => overlapScore('beta gamma', d)),
    );
    assert.deepEqual(contract.bodies[0], {
      shape: 'cohere',
      body: { model: 'rerank-test', query: 'beta gamma', documents, top_n: 4 },
    });
  });

  test('tei shape: sends query and texts with truncation on; reads [{index, score}]', async () => {
    contract.bodies.length = 0;
    const documents = ['alpha beta', 'gamma', 'beta gamma delta'];
    const scores = await client('tei')('beta gamma', documents, never);
    assert.deepEqual(
      scores,
      documents.map((d) => overlapScore('beta gamma', d)),
    );
    assert.equal(contract.bodies[0]?.body.truncate, true);
    assert.deepEqual(contract.bodies[0]?.body.texts, documents);
  });

  test('a refused key, a refused body and a rate limit are named by their status, once each (no retry)', async () => {
    assert.match((await failure(client('cohere', { apiKey: 'wrong-key-0123456789' }))).message, /HTTP 401/);
    assert.match((await failure(client('cohere', { model: null }))).message, /HTTP 422/);
    const many = Array.from({ length: TEI_MAX_BATCH + 1 }, (_, i) => `text ${i}`);
    const overBatch = await failure(client('tei'), many);
    assert.equal(overBatch.outcome, 'http_status');
    assert.match(overBatch.message, /HTTP 422/);
    const before = contract.server.count('POST /v1/rerank');
    contract.server.faults.push({ match: 'POST /v1/rerank', status: 429, headers: { 'retry-after': '1' } });
    const limited = await failure(client('cohere'));
    assert.equal(limited.outcome, 'http_status');
    assert.match(limited.message, /HTTP 429/);
    assert.equal(contract.server.count('POST /v1/rerank') - before, 1);
    contract.server.faults.push({ match: 'POST /rerank', status: 503 });
    assert.match((await failure(client('tei'))).message, /HTTP 503/);
  });

  test('a slow reranker is a timeout; a closed port is unreachable', async () => {
    contract.server.faults.push({ match: 'POST /v1/rerank', hang: true });
    const slow = await failure(client('cohere', { timeoutMs: 200 }));
    assert.equal(slow.outcome, 'timeout');
    assert.match(slow.message, /did not answer within 200 ms/);
    const down = await failure(client('cohere', { url: 'http://127.0.0.1:9/v1/rerank' }));
    assert.equal(down.outcome, 'unreachable');
  });

  test('wrong shapes, NaN and missing scores, indexes out of range or repeated are each named', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['{"data": []}', 'bad_shape', /not the cohere shape/],
      ['[{"index": 0, "relevance_score": 1}]', 'bad_shape', /not the cohere shape/],
      ['<html>busy</html>', 'bad_shape', /not JSON/],
      ['{"results": [{"index": "0", "relevance_score": 1}]}', 'bad_shape', /not the cohere shape/],
      ['{"results": [{"index": 0, "relevance_score": NaN}]}', 'bad_score', /NaN or missing/],
      ['{"results": [{"index": 0, "relevance_score": "0.5"}]}', 'bad_score', /NaN or missing/],
      ['{"results": [{"index": 0, "relevance_score": 0.5}]}', 'bad_score', /no score for document 1/],
      ['{"results": [{"index": 3, "relevance_score": 0.5}]}', 'bad_index', /index out of range/],
      ['{"results": [{"index": -1, "relevance_score": 0.5}]}', 'bad_index', /index out of range/],
      [
        '{"results": [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}]}',
        'bad_index',
        /twice/,
      ],
    ];
    for (const [body, outcome, message] of cases) {
      contract.server.faults.push({ match: 'POST /v1/rerank', status: 200, body });
      const failed = await failure(client('cohere'));
      assert.equal(failed.outcome, outcome, body);
      assert.match(failed.message, message, body);
    }
    // The contract's own NaN, written as Python writes it, read through the tei shape.
    contract.score = (query, document) =>
      document.includes('c') ? Number.NaN : overlapScore(query, document);
    try {
      const nan = await failure(client('tei'));
      assert.equal(nan.outcome, 'bad_score');
    } finally {
      contract.score = overlapScore;
    }
  });
});

describe('rerank settings', () => {
  const setup = (env: Record<string, string>) => rerankSetup(loadMemorySettings(env));

  test('off by default; a complete http or onnx setting is taken as given', () => {
    assert.deepEqual(setup({}), { requested: 'none', config: null, problems: [] });
    const http = setup({
      MEMORY_RERANKER: 'http',
      MEMORY_RERANK_URL: 'http://127.0.0.1:8080/rerank',
      MEMORY_RERANK_API: 'tei',
      MEMORY_RERANK_TOP_N: '12',
    });
    assert.deepEqual(http.config, {
      kind: 'http',
      api: 'tei',
      url: 'http://127.0.0.1:8080/rerank',
      model: null,
      apiKey: null,
      timeoutMs: 2000,
      topN: 12,
    });
  });

  test('each bad setting is named, and the reranker is then off', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { MEMORY_RERANKER: 'http', MEMORY_RERANK_URL: 'localhost:8080/rerank', MEMORY_RERANK_MODEL: 'm' },
        /^MEMORY_RERANK_URL: needs a scheme/,
      ],
      [{ MEMORY_RERANKER: 'http', MEMORY_RERANK_MODEL: 'm' }, /^MEMORY_RERANK_URL: required/],
      [
        { MEMORY_RERANKER: 'http', MEMORY_RERANK_URL: 'https://api.example/v2/rerank' },
        /^MEMORY_RERANK_MODEL: required/,
      ],
      [{ MEMORY_RERANKER: 'onnx' }, /^MEMORY_RERANK_DIR: required/],
      [
        { MEMORY_RERANKER: 'onnx', MEMORY_RERANK_DIR: import.meta.dirname },
        /^MEMORY_RERANK_DIR: .* has no tokenizer\.json/,
      ],
      [{ MEMORY_RERANKER: 'cohere' }, /^MEMORY_RERANKER: /],
      [
        {
          MEMORY_RERANKER: 'http',
          MEMORY_RERANK_URL: 'http://x/rerank',
          MEMORY_RERANK_API: 'tei',
          MEMORY_RERANK_TOP_N: '0',
        },
        /^MEMORY_RERANK_TOP_N: /,
      ],
    ];
    for (const [env, problem] of cases) {
      const result = setup(env);
      assert.equal(result.config, null, JSON.stringify(env));
      assert.ok(
        result.problems.some((line) => problem.test(line)),
        `${JSON.stringify(env)}: ${result.problems}`,
      );
      assert.ok(!result.problems.join(' ').includes('localhost:8080'), 'a problem never repeats the value');
    }
  });
});
