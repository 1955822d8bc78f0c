/**
 * all-MiniLM-L6-v2 in process: the set-up ONNX graph under onnxruntime's CPU provider and
 * the WordPiece tokenizer. Loaded by an embedding pool thread (or by fetch-model to check
 * its work), never by a request thread.
 */
import { readFileSync } from 'node:fs';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import type { EmbedResult } from '../types.ts';
import { type ModelFiles, notSetUpMessage, readyModel } from './files.ts';
import { type TokenizerJson, WordPieceTokenizer } from './tokenizer.ts';

/**
 * Tokens per inference call (texts × padded length). Small runs of similar length win: the
 * activations stay in the CPU cache and little is spent on padding. Measured on WordNet
 * memories (about 22 tokens), a batch of 32 took 570 ms at 2048 tokens per run, 240 ms at
 * 256 and 310 ms one text at a time. A text at the 256-token limit runs alone.
 */
const TOKENS_PER_RUN = 256;

export class MiniLm {
  private constructor(
    private readonly session: InferenceSession,
    readonly tokenizer: WordPieceTokenizer,
  ) {}

  static async load(files: ModelFiles): Promise<MiniLm> {
    const tokenizer = new WordPieceTokenizer(
      JSON.parse(readFileSync(files.tokenizer, 'utf8')) as TokenizerJson,
    );
    const session = await InferenceSession.create(files.onnx, {
      graphOptimizationLevel: 'all',
      // One core per pool thread: MEMORY_EMBED_THREADS stays the one parallelism setting;
      // onnxruntime's default (a thread per core in every pool thread) would oversubscribe
      // the cores the request threads need.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // An arena keeps its peak for the thread's life; without it RSS was 8 MB lower at the
      // same speed (runs are capped at TOKENS_PER_RUN, so activations stay small anyway).
      enableCpuMemArena: false,
    });
    return new MiniLm(session, tokenizer);
  }

  /** Unit vectors, one per text, in the order given. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map((text, index) => ({ index, ids: this.tokenizer.encode(text).ids }));
    encoded.sort((a, b) => b.ids.length - a.ids.length);
    const vectors: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < encoded.length; ) {
      // Longest first: the first text of a sub-batch sets its padded length.
      const width = encoded[start]!.ids.length;
      const end = Math.min(encoded.length, start + Math.max(1, Math.floor(TOKENS_PER_RUN / width)));
      const batch = encoded.slice(start, end);
      const { sentences } = await this.run(batch.map((item) => item.ids));
      batch.forEach((item, i) => {
        vectors[item.index] = sentences[i]!;
      });
      start = end;
    }
    return vectors;
  }

  /**
   * One inference over token ids, right-padded to the longest. `withTokens` also returns
   * each text's last hidden states (its real tokens only), for tests of the graph.
   */
  async run(
    batch: number[][],
    withTokens = false,
  ): Promise<{ sentences: Float32Array[]; tokens: Float32Array[][] }> {
    const width = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(batch.length * width);
    const mask = new BigInt64Array(batch.length * width);
    batch.forEach((row, r) => {
      row.forEach((id, c) => {
        ids[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
      });
    });
    const dims = [batch.length, width];
    const outputs = await this.session.run(
      { input_ids: new Tensor('int64', ids, dims), attention_mask: new Tensor('int64', mask, dims) },
      withTokens ? ['sentence_embedding', 'last_hidden_state'] : ['sentence_embedding'],
    );
    const pooled = outputs.sentence_embedding!.data as Float32Array;
    const size = pooled.length / batch.length;
    const sentences = batch.map((_, r) => pooled.slice(r * size, (r + 1) * size));
    const tokens: Float32Array[][] = [];
    if (withTokens) {
      const hidden = outputs.last_hidden_state!.data as Float32Array;
      batch.forEach((row, r) => {
        tokens.push(row.map((_, c) => hidden.slice((r * width + c) * size, (r * width + c + 1) * size)));
      });
    }
    for (const output of Object.values(outputs)) output.dispose();
    return { sentences, tokens };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

const loaded = new Map<string, Promise<MiniLm>>();

/** The pool thread's entry: an absent model is a transient failure, so keyword search goes on. */
export async function embedMiniLm(dir: string, texts: string[]): Promise<EmbedResult> {
  let model = loaded.get(dir);
  if (!model) {
    // Checked on every call until found: `fetch-model` run beside a live gateway takes effect
    // at the indexer's next retry, without a restart.
    const files = readyModel(dir);
    if (!files) return { ok: false, permanent: false, message: notSetUpMessage(dir) };
    model = MiniLm.load(files);
    loaded.set(dir, model);
  }
  let session: MiniLm;
  try {
    session = await model;
  } catch (error) {
    // A failed load is tried again on the next call (a rebuilt file may be there by then).
    loaded.delete(dir);
    return {
      ok: false,
      permanent: false,
      message: `all-MiniLM-L6-v2 did not load: ${(error as Error).message}`,
    };
  }
  try {
    return { ok: true, vectors: await session.embed(texts) };
  } catch (error) {
    return { ok: false, permanent: false, message: `all-MiniLM-L6-v2 failed: ${(error as Error).message}` };
  }
}
