/**
 * The onnx reranker on a tiny cross-encoder the test writes itself (random weights, real
 * shapes and files): real onnxruntime, the real WordPiece pair encoding, the graph built
 * from safetensors or read from model.onnx, the embedding pool running it, and a gateway
 * whose search order follows its scores.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { Embedder } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';
import { readSafetensors } from '../../../gateway/namespaces/memory/embeddings/minilm/safetensors.ts';
import { WordPieceTokenizer } from '../../../gateway/namespaces/memory/embeddings/minilm/tokenizer.ts';
import { CrossEncoder, rerankCrossEncoder } from '../../../gateway/namespaces/memory/rerank/cross-encoder.ts';
import { buildCrossEncoderGraph } from '../../../gateway/namespaces/memory/rerank/cross-encoder-graph.ts';
import { RerankStage } from '../../../gateway/namespaces/memory/rerank/stage.ts';
import type { MemoryRecord } from '../../../gateway/namespaces/memory/store/types.ts';
import { BertReference } from '../../support/bert-reference.ts';
import { startTestGateway } from '../../support/gateway.ts';
import {
  TINY_CONFIG,
  tinyTokenizerJson,
  tinyVocab,
  writeTinyCrossEncoder,
} from '../../support/tiny-cross-encoder.ts';

const QUERY = 'where does the user live';
const DOCUMENTS = [
  'we moved into the apartment in denver',
  'the quarterly revenue report is due friday',
  'the user lives in berlin',
  'deploy the staging cluster every monday after the review',
  'team notes live in the wiki',
];

let root: string;
let dir: string;
let encoder: CrossEncoder;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'rerank-onnx-'));
  dir = join(root, 'tiny-cross-encoder');
  await writeTinyCrossEncoder(dir);
  encoder = await CrossEncoder.load(dir);
});

after(async () => {
  await encoder?.close();
  await rm(root, { recursive: true, force: true });
});

const tokenizer = () => new WordPieceTokenizer(tinyTokenizerJson(), 64);

describe('the onnx cross-encoder', () => {
  test('pairs are encoded as BERT pairs: [CLS] query [SEP] document [SEP], types 0 then 1', () => {
    const vocab = tinyVocab();
    const pair = tokenizer().encodePair('the user', 'checks in berlin');
    assert.deepEqual(
      pair.ids,
      ['[CLS]', 'the', 'user', '[SEP]', 'check', '##s', 'in', 'berlin', '[SEP]'].map((t) => vocab[t]),
    );
    assert.deepEqual(pair.typeIds, [0, 0, 0, 0, 1, 1, 1, 1, 1]);
    // Over the limit, the longer side gives way first: the query survives a long memory.
    const long = tokenizer().encodePair('where does the user live', 'the '.repeat(200), 16);
    assert.equal(long.ids.length, 16);
    assert.deepEqual(long.ids.slice(1, 6), tokenizer().pieces('where does the user live', 10));
  });

  test('its logits are those of a plain forward pass over the same weights, within 1e-4', async () => {
    const reference = new BertReference(dir);
    for (const document of DOCUMENTS) {
      const pair = tokenizer().encodePair(QUERY, document);
      const [logit] = await encoder.logits([pair]);
      const expected = reference.classify(pair.ids, pair.typeIds);
      assert.ok(Math.abs(logit! - expected) < 1e-4, `${document}: onnx ${logit} vs reference ${expected}`);
    }
  });

  test('scores are deterministic, differ per document, and batching gives the one-by-one scores', async () => {
    const batched = await encoder.score(QUERY, DOCUMENTS);
    assert.deepEqual(await encoder.score(QUERY, DOCUMENTS), batched);
    const again = await CrossEncoder.load(dir);
    try {
      assert.deepEqual(await again.score(QUERY, DOCUMENTS), batched);
    } finally {
      await again.close();
    }
    assert.equal(new Set(batched).size, DOCUMENTS.length, 'random weights still tell documents apart');
    for (const [i, document] of DOCUMENTS.entries()) {
      const [alone] = await encoder.score(QUERY, [document]);
      assert.ok(
        Math.abs(alone! - batched[i]!) < 1e-6,
        `${document}: ${alone} alone vs ${batched[i]} batched`,
      );
      assert.ok(alone! > 0 && alone! < 1);
    }
  });

  test('a directory holding model.onnx (an Optimum export) scores the same without safetensors', async () => {
    const exported = join(root, 'exported');
    await writeTinyCrossEncoder(exported);
    const { readFile, mkdir } = await import('node:fs/promises');
    const graph = buildCrossEncoderGraph(
      readSafetensors(await readFile(join(exported, 'model.safetensors'))),
      { ...TINY_CONFIG, num_labels: 1 },
    );
    const only = join(root, 'only-onnx');
    await mkdir(join(only, 'onnx'), { recursive: true });
    await writeFile(join(only, 'onnx', 'model.onnx'), graph);
    await writeFile(join(only, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    const result = await rerankCrossEncoder(only, QUERY, DOCUMENTS);
    assert.ok(result.ok);
    const scores = result.scores.map((s) => s.toFixed(6));
    assert.deepEqual(
      scores,
      (await encoder.score(QUERY, DOCUMENTS)).map((s) => s.toFixed(6)),
    );
  });

  test('a tokenizer other than WordPiece is refused by name, and the next call tries again', async () => {
    const other = join(root, 'unigram');
    await writeTinyCrossEncoder(other);
    await writeFile(
      join(other, 'tokenizer.json'),
      JSON.stringify({ model: { type: 'Unigram', vocab: [['<unk>', 0]] } }),
    );
    const result = await rerankCrossEncoder(other, QUERY, DOCUMENTS);
    assert.equal(result.ok, false);
    assert.match(
      !result.ok ? result.message : '',
      /Unigram tokenizer; MEMORY_RERANKER=onnx runs BERT \(WordPiece\)/,
    );
    await writeFile(join(other, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    assert.equal((await rerankCrossEncoder(other, QUERY, DOCUMENTS)).ok, true);
  });

  test('the embedding pool runs it, with embeddings off, giving the in-process scores', async () => {
    const embedder = new Embedder({ provider: 'none' }, { threads: 1, queryTimeoutMs: 60_000 });
    try {
      const result = await embedder.rerank(dir, QUERY, DOCUMENTS);
      assert.ok(result.ok, !result.ok ? result.message : '');
      assert.deepEqual(result.scores, await encoder.score(QUERY, DOCUMENTS));
    } finally {
      await embedder.close();
    }
  });
});

describe('the onnx rerank stage under load', () => {
  test('past one running and one queued rerank per pool thread, a search skips reranking at once', async () => {
    const embedder = new Embedder({ provider: 'none' }, { threads: 1, queryTimeoutMs: 60_000 });
    const stage = new RerankStage(
      {
        requested: 'onnx',
        problems: [],
        config: { kind: 'onnx', dir, threads: 1, timeoutMs: 60_000, topN: 30 },
      },
      embedder,
      pino({ level: 'silent' }),
    );
    const hits = DOCUMENTS.map((content, i) => ({
      memory: { id: `m${i}`, content } as MemoryRecord,
      relevance: 1 - i / 10,
      semantic: null,
      keyword: 1,
      cosine: null,
      keywordScore: null,
      source: 'keyword' as const,
      weak: false,
    }));
    const ranked = { hits, best: 1, weak: false, hidden: 0 };
    const search = () => stage.apply(QUERY, ranked, 5, new AbortController().signal);
    try {
      // Started together: the first two take the pool's places before any can finish.
      const answers = await Promise.all([search(), search(), search(), search()]);
      assert.deepEqual(
        answers.map((answer) => answer.degraded ?? 'reranked'),
        [
          'reranked',
          'reranked',
          'reranking skipped: the local reranker is busy with earlier searches; hits are in first-stage order',
          'reranking skipped: the local reranker is busy with earlier searches; hits are in first-stage order',
        ],
      );
      assert.deepEqual(
        answers[2]!.ranked.hits.map((hit) => hit.memory.id),
        hits.map((hit) => hit.memory.id),
      );
      // Their places are given back once their runs end.
      assert.equal((await search()).degraded, undefined);
    } finally {
      await embedder.close();
    }
  });
});

describe('memory_search with MEMORY_RERANKER=onnx', () => {
  test('the hits follow the cross-encoder’s scores; stats name it', async () => {
    const gw = await startTestGateway({
      env: {
        MEMORY_EMBEDDINGS: 'none',
        MEMORY_RERANKER: 'onnx',
        MEMORY_RERANK_DIR: dir,
        // The first call loads onnxruntime and builds the graph in a fresh pool thread.
        MEMORY_RERANK_TIMEOUT_MS: '60000',
      },
    });
    const client = new Client({ name: 'rerank-onnx-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
          requestInit: { headers: { 'X-API-Key': gw.apiKey } },
        }),
      );
      for (const content of DOCUMENTS)
        await client.callTool({ name: 'memory_write', arguments: { content } });
      const result = await client.callTool({
        name: 'memory_search',
        arguments: { query: 'the user live in the apartment', limit: 5, include_weak: true },
      });
      // biome-ignore lint/suspicious/noExplicitAny: checked field by field
      const answer = result.structuredContent as any;
      assert.equal(answer.degraded, undefined, answer.degraded);
      const hits = answer.hits as { content: string; rerank_score: number }[];
      assert.ok(hits.length >= 3, `${hits.length} hits`);
      const direct = await encoder.score(
        'the user live in the apartment',
        hits.map((hit) => hit.content),
      );
      const rounded = direct.map((s) => Math.round(s * 10_000) / 10_000);
      assert.deepEqual(
        hits.map((hit) => hit.rerank_score),
        rounded,
      );
      assert.deepEqual(
        rounded,
        [...rounded].sort((a, b) => b - a),
        'hits are in the order of the cross-encoder’s scores',
      );
      // The first stage orders by relevance; these scores moved hits out of that order.
      const relevance = (answer.hits as { relevance: number }[]).map((hit) => hit.relevance);
      assert.notDeepEqual(
        relevance,
        [...relevance].sort((a, b) => b - a),
        'the reranker changed the first stage’s order',
      );
      const stats = await client.callTool({ name: 'memory_stats', arguments: {} });
      // biome-ignore lint/suspicious/noExplicitAny: checked field by field
      const reranker = (stats.structuredContent as any).reranker;
      assert.deepEqual(
        [reranker.kind, reranker.active, reranker.model, reranker.top_n],
        ['onnx', true, 'tiny-cross-encoder', 30],
      );
    } finally {
      await client.close();
      await gw.close();
    }
  });

  test('a model that does not load keeps the first-stage order, saying why', async () => {
    const broken = join(root, 'broken');
    await writeTinyCrossEncoder(broken);
    await writeFile(join(broken, 'model.safetensors'), Buffer.from('not weights at all'));
    const gw = await startTestGateway({
      env: {
        MEMORY_EMBEDDINGS: 'none',
        MEMORY_RERANKER: 'onnx',
        MEMORY_RERANK_DIR: broken,
        MEMORY_RERANK_TIMEOUT_MS: '60000',
      },
    });
    const client = new Client({ name: 'rerank-onnx-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
          requestInit: { headers: { 'X-API-Key': gw.apiKey } },
        }),
      );
      for (const content of DOCUMENTS.slice(0, 3))
        await client.callTool({ name: 'memory_write', arguments: { content } });
      const result = await client.callTool({
        name: 'memory_search',
        arguments: { query: 'the user live in the apartment', include_weak: true },
      });
      assert.notEqual(result.isError, true);
      // biome-ignore lint/suspicious/noExplicitAny: checked field by field
      const answer = result.structuredContent as any;
      assert.match(answer.degraded, /reranking skipped: the cross-encoder did not load: .*first-stage order/);
      assert.ok(answer.hits.length >= 2);
      assert.ok(answer.hits.every((hit: { rerank_score?: number }) => hit.rerank_score === undefined));
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
