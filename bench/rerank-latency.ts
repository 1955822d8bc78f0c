/**
 * `npx tsx bench/rerank-latency.ts`: what MEMORY_RERANKER=onnx costs per search with a
 * cross-encoder of ms-marco-MiniLM-L-6-v2's shape (6 layers, width 384, 12 heads, the
 * uncased BERT vocabulary), on this machine, with the product's own loader and scorer.
 *
 * No reranker weights are reachable here, so the encoder is all-MiniLM-L6-v2's (set up by
 * `npm run memory -- fetch-model`, same architecture and size) with a seeded random
 * classifier on top. The scores mean nothing; the cost does not depend on the weights'
 * values. Each search scores 30 (question, memory) pairs from the conversation set, as
 * MEMORY_RERANK_TOP_N=30 would. Reported: the graph build and session load, and per search
 * the wall time and the process CPU time (less sensitive than wall time to other work on a
 * shared machine). Printed, not written: bench/results/NOTES.md keeps the runs.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { miniLmDir } from '../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { readSafetensors } from '../gateway/namespaces/memory/embeddings/minilm/safetensors.ts';
import { CrossEncoder } from '../gateway/namespaces/memory/rerank/cross-encoder.ts';
import { buildCrossEncoderGraph } from '../gateway/namespaces/memory/rerank/cross-encoder-graph.ts';
import { machineInfo } from './machine.ts';
import { evalSets, loadConversations } from './memory-quality-set.ts';
import { percentile } from './stats.ts';

const TOP_N = 30;
const SEARCHES = 40;

function seededClassifier(hidden: number): { weight: Float32Array; bias: Float32Array } {
  let state = 7;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return (state / 2 ** 31) * 2 - 1;
  };
  return { weight: Float32Array.from({ length: hidden }, () => next() * 0.1), bias: Float32Array.of(0) };
}

const source = miniLmDir();
const config = JSON.parse(readFileSync(join(source, 'config.json'), 'utf8'));
const weights = readSafetensors(readFileSync(join(source, 'model.safetensors')));
const head = seededClassifier(config.hidden_size);
weights.set('classifier.weight', { shape: [1, config.hidden_size], data: head.weight });
weights.set('classifier.bias', { shape: [1], data: head.bias });

const dir = mkdtempSync(join(tmpdir(), 'rerank-latency-'));
try {
  let started = performance.now();
  const graph = buildCrossEncoderGraph(weights, { ...config, num_labels: 1 });
  const buildMs = performance.now() - started;
  writeFileSync(join(dir, 'model.onnx'), graph);
  copyFileSync(join(source, 'tokenizer.json'), join(dir, 'tokenizer.json'));
  started = performance.now();
  const encoder = await CrossEncoder.load(dir);
  const loadMs = performance.now() - started;

  const conversations = evalSets().flatMap((set) => loadConversations(set.dir));
  const searches = conversations.slice(0, SEARCHES).map((conversation) => ({
    query: conversation.questions[0]!.question,
    documents: conversation.sessions.flatMap((s) => s.turns.map((t) => t.content)).slice(0, TOP_N),
  }));
  await encoder.score(searches[0]!.query, searches[0]!.documents);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const search of searches) {
    const cpuBefore = process.cpuUsage();
    const at = performance.now();
    await encoder.score(search.query, search.documents);
    wall.push(performance.now() - at);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
  }
  await encoder.close();
  const round = (n: number) => Math.round(n * 10) / 10;
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machineInfo(),
        loadavg1m: round(loadavg()[0]!),
        shape: `${config.num_hidden_layers} layers × ${config.hidden_size}, vocab ${config.vocab_size}`,
        pairsPerSearch: TOP_N,
        searches: searches.length,
        graphBuildMs: round(buildMs),
        sessionLoadMs: round(loadMs),
        wallMs: { p50: round(percentile(sorted(wall), 50)), p99: round(percentile(sorted(wall), 99)) },
        cpuMs: { p50: round(percentile(sorted(cpu), 50)), p99: round(percentile(sorted(cpu), 99)) },
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
