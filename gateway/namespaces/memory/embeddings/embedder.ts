import type { Piscina } from 'piscina';
import { lazyRequire } from '../../../../shared/lazy-require.ts';
import { threadEntry } from '../../../../shared/thread-entry.ts';
import { untilAborted } from '../../../../shared/until-aborted.ts';
import { MINILM_MODEL } from './minilm/files.ts';
import {
  type EmbeddingProviderSettings,
  type EmbedResult,
  LOCAL_MODEL,
  type RerankResult,
  type RerankTask,
} from './types.ts';

const loadPiscina = lazyRequire<typeof import('piscina')>('piscina');

export class EmbedderUnavailable extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

function knownModel(settings: EmbeddingProviderSettings): { model: string; dimensions: number } | null {
  if (settings.provider === 'local') return LOCAL_MODEL;
  if (settings.provider === 'minilm') return MINILM_MODEL;
  if (settings.provider === 'openai' && settings.dimensions)
    return { model: settings.model, dimensions: settings.dimensions };
  return null;
}

/**
 * The embedding provider as the namespace sees it: calls go to a piscina pool, so no
 * request thread ever runs inference. Query vectors are cached (agents repeat queries), per
 * API key: a cache shared by keys answered one key's query from another's, which showed
 * (by speed, or by a vector while the provider was down) what another key had searched for.
 */
export class Embedder {
  /** Made on the first embedding: piscina and its thread machinery cost RSS a gateway that never embeds should not pay. */
  private pool: Piscina | null = null;
  private readonly poolOptions: ConstructorParameters<typeof Piscina>[0];
  private readonly queryCache = new Map<string, Float32Array>();
  private learnedModel: { model: string; dimensions: number } | null;

  constructor(
    readonly settings: EmbeddingProviderSettings,
    options: { threads: number; queryTimeoutMs: number; nice?: number },
  ) {
    this.queryTimeoutMs = options.queryTimeoutMs;
    // Made even with embeddings off: a local reranker (MEMORY_RERANKER=onnx) runs in it too.
    // Nothing starts until the first task.
    this.poolOptions = {
      filename: threadEntry(import.meta.url, './embed-task', './embed-worker.mjs').href,
      minThreads: 0,
      maxThreads: options.threads,
      // A local model costs 100–200 MB per thread: let idle threads go.
      idleTimeout: 120_000,
      workerData: { nice: options.nice ?? 0 },
    };
    this.learnedModel = knownModel(settings);
  }

  private readonly queryTimeoutMs: number;

  get enabled(): boolean {
    return this.settings.provider !== 'none';
  }

  /** Model and width, known up front for the local models and for `openai` with EMBEDDINGS_DIMENSIONS, else after one call. */
  get model(): { model: string; dimensions: number } | null {
    return this.learnedModel;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (!this.enabled) throw new EmbedderUnavailable('embeddings are off (MEMORY_EMBEDDINGS=none)', true);
    this.pool ??= new (loadPiscina().Piscina)(this.poolOptions);
    const result = (await this.pool.run({ settings: this.settings, texts })) as EmbedResult;
    if (!result.ok) throw new EmbedderUnavailable(result.message, result.permanent);
    if (!this.learnedModel && this.settings.provider === 'openai' && result.vectors[0]) {
      this.learnedModel = { model: this.settings.model, dimensions: result.vectors[0].length };
    }
    return result.vectors;
  }

  /**
   * One query, bounded by the query timeout so search can fall back to keywords quickly. The
   * timeout ends the wait, never the work: cancelling a piscina task terminates its thread in
   * the middle of a model run, and onnxruntime then throws from native code during the
   * thread's teardown, which aborts the whole process (seen under load on a slow first
   * query). A late answer still lands in the cache, so asking again finds it. `cacheScope`
   * (the asking API key) keeps each key's cached queries its own.
   */
  async embedQuery(text: string, cacheScope = ''): Promise<Float32Array> {
    // A key id never holds a NUL, so no other scope's entry can share this name.
    const entry = `${cacheScope}\0${text}`;
    const cached = this.queryCache.get(entry);
    if (cached) return cached;
    const task = this.embed([text]).then(([vector]) => {
      if (this.queryCache.size >= 512) this.queryCache.delete(this.queryCache.keys().next().value!);
      this.queryCache.set(entry, vector!);
      return vector!;
    });
    return untilAborted(task, AbortSignal.timeout(this.queryTimeoutMs)).catch((error: unknown) => {
      if (error instanceof EmbedderUnavailable) throw error;
      const name = (error as Error).name;
      throw new EmbedderUnavailable(
        name === 'AbortError' || name === 'TimeoutError'
          ? 'query embedding timed out'
          : (error as Error).message,
        false,
      );
    });
  }

  /**
   * Scores (query, document) pairs with the local cross-encoder in `dir`, on the same pool
   * threads as the embedding model: inference never runs on a request thread, and the
   * threads, their priority and MEMORY_EMBED_THREADS are shared rather than doubled.
   */
  async rerank(dir: string, query: string, documents: string[]): Promise<RerankResult> {
    this.pool ??= new (loadPiscina().Piscina)(this.poolOptions);
    const task: RerankTask = { rerank: { dir, query, documents } };
    return (await this.pool.run(task)) as RerankResult;
  }

  /**
   * Lets the tasks in hand finish before the threads stop (piscina's close, not destroy):
   * stopping a thread in the middle of a model run aborts the process, as above.
   */
  async close(): Promise<void> {
    await this.pool?.close();
  }
}
