/**
 * A local cross-encoder under onnxruntime's CPU provider: each (query, memory) pair is read
 * by the model together and gets one relevance logit. Loaded by an embedding pool thread
 * (embed-task.ts), never by a request thread: thirty pairs are tens of milliseconds of CPU.
 */
import { readFileSync } from 'node:fs';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { readSafetensors } from '../embeddings/minilm/safetensors.ts';
import { type TokenizerJson, WordPieceTokenizer } from '../embeddings/minilm/tokenizer.ts';
import { buildCrossEncoderGraph, type CrossEncoderConfig } from './cross-encoder-graph.ts';
import { crossEncoderFiles } from './files.ts';

/**
 * Tokens per pair. Cross-encoders take 512, but CPU time grows with the square of the
 * length in attention and linearly elsewhere, and memories are short (about 22 tokens on
 * the quality set): 256 keeps a search's worst case bounded while cutting almost nothing.
 */
const PAIR_TOKENS = 256;
/**
 * Tokens per inference call (pairs × padded length). Small runs win here too (minilm/runtime.ts):
 * 30 question–memory pairs through a MiniLM-L6-sized cross-encoder took a median 329 ms of CPU
 * at 128 tokens a run, 331 at 256, 369 at 512 and 416 at 1024 (`bench/rerank-latency.ts`).
 */
const TOKENS_PER_RUN = 256;

import type { RerankResult } from '../embeddings/types.ts';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export class CrossEncoder {
  private constructor(
    private readonly session: InferenceSession,
    private readonly tokenizer: WordPieceTokenizer,
    private readonly maxTokens: number,
  ) {}

  static async load(dir: string): Promise<CrossEncoder> {
    const files = crossEncoderFiles(dir);
    if (typeof files === 'string') throw new Error(files);
    const json = JSON.parse(readFileSync(files.tokenizer, 'utf8')) as TokenizerJson;
    if (json.model?.type !== 'WordPiece')
      throw new Error(
        `${files.tokenizer} is a ${json.model?.type ?? 'unknown'} tokenizer; MEMORY_RERANKER=onnx runs BERT (WordPiece) cross-encoders such as ms-marco-MiniLM-L-6-v2. Serve other rerankers (bge-reranker-v2-m3) with TEI or Infinity and use MEMORY_RERANKER=http`,
      );
    const config = files.config
      ? (JSON.parse(readFileSync(files.config, 'utf8')) as CrossEncoderConfig & {
          max_position_embeddings?: number;
        })
      : null;
    const maxTokens = Math.min(PAIR_TOKENS, config?.max_position_embeddings ?? PAIR_TOKENS);
    const tokenizer = new WordPieceTokenizer(json, maxTokens);
    // A directory with only safetensors is built into a graph here, in memory, once per pool
    // thread, so the user's directory is never written. It costs the first search: 1.8–3.0 s
    // for a MiniLM-L6-sized model on the loaded 2-core test machine; a model.onnx skips it.
    const model = files.onnx
      ? files.onnx
      : buildCrossEncoderGraph(readSafetensors(readFileSync(files.safetensors!)), config!);
    const options: InferenceSession.SessionOptions = {
      graphOptimizationLevel: 'all',
      // One core per pool thread, as the embedder (minilm/runtime.ts says why).
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      enableCpuMemArena: false,
    };
    const session =
      typeof model === 'string'
        ? await InferenceSession.create(model, options)
        : await InferenceSession.create(model, options);
    return new CrossEncoder(session, tokenizer, maxTokens);
  }

  /** A relevance in (0, 1) per document, in the order given: the sigmoid of the pair's logit. */
  async score(query: string, documents: string[]): Promise<number[]> {
    const encoded = documents.map((document, index) => ({
      index,
      ...this.tokenizer.encodePair(query, document, this.maxTokens),
    }));
    // Longest first: the first pair of a sub-batch sets its padded length.
    encoded.sort((a, b) => b.ids.length - a.ids.length);
    const scores: number[] = new Array(documents.length);
    for (let start = 0; start < encoded.length; ) {
      const width = encoded[start]!.ids.length;
      const end = Math.min(encoded.length, start + Math.max(1, Math.floor(TOKENS_PER_RUN / width)));
      const batch = encoded.slice(start, end);
      const logits = await this.logits(batch);
      batch.forEach((pair, i) => {
        scores[pair.index] = sigmoid(logits[i]!);
      });
      start = end;
    }
    return scores;
  }

  /** One inference over pairs, right-padded to the longest; one logit per pair. */
  async logits(batch: { ids: number[]; typeIds: number[] }[]): Promise<Float32Array> {
    const width = Math.max(...batch.map((pair) => pair.ids.length));
    const ids = new BigInt64Array(batch.length * width);
    const mask = new BigInt64Array(batch.length * width);
    const types = new BigInt64Array(batch.length * width);
    batch.forEach((pair, r) => {
      pair.ids.forEach((id, c) => {
        ids[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
        types[r * width + c] = BigInt(pair.typeIds[c]!);
      });
    });
    const dims = [batch.length, width];
    const all: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, dims),
      attention_mask: new Tensor('int64', mask, dims),
      token_type_ids: new Tensor('int64', types, dims),
    };
    // Exports of models without segment embeddings take no token_type_ids: feed what it declares.
    const feeds = Object.fromEntries(this.session.inputNames.map((name) => [name, all[name]!]));
    const name = this.session.outputNames.includes('logits') ? 'logits' : this.session.outputNames[0]!;
    const outputs = await this.session.run(feeds, [name]);
    const data = outputs[name]!.data as Float32Array;
    for (const output of Object.values(outputs)) output.dispose();
    if (data.length !== batch.length)
      throw new Error(`the model gave ${data.length / batch.length} outputs per pair; a reranker gives one`);
    return data;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

const loaded = new Map<string, Promise<CrossEncoder>>();

/** The pool thread's entry: failures come back as a message, so search falls back to the first stage. */
export async function rerankCrossEncoder(
  dir: string,
  query: string,
  documents: string[],
): Promise<RerankResult> {
  let model = loaded.get(dir);
  if (!model) {
    model = CrossEncoder.load(dir);
    loaded.set(dir, model);
  }
  let encoder: CrossEncoder;
  try {
    encoder = await model;
  } catch (error) {
    // Tried again on the next search: a fixed or finished directory needs no restart.
    loaded.delete(dir);
    return { ok: false, message: `the cross-encoder did not load: ${(error as Error).message}` };
  }
  try {
    return { ok: true, scores: await encoder.score(query, documents) };
  } catch (error) {
    return { ok: false, message: `the cross-encoder failed: ${(error as Error).message}` };
  }
}
