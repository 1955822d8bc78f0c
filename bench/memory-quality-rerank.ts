/**
 * `--reranker <http URL | cross-encoder directory>` for `npm run bench -- memory-quality`:
 * the product's own rerank stage (rerank/stage.ts) over the default's first stage, read
 * from the same settings the gateway reads (MEMORY_RERANK_API, MEMORY_RERANK_MODEL,
 * MEMORY_RERANK_API_KEY, MEMORY_RERANK_TOP_N), so the bench measures what a gateway would run.
 */
import pino from 'pino';
import { Embedder } from '../gateway/namespaces/memory/embeddings/embedder.ts';
import { rerankSetup } from '../gateway/namespaces/memory/rerank/config.ts';
import { RerankStage } from '../gateway/namespaces/memory/rerank/stage.ts';
import { loadMemorySettings } from '../gateway/namespaces/memory/settings.ts';

export interface BenchReranker {
  stage: RerankStage;
  /** Searches whose rerank failed (their row keeps the first-stage order, as the gateway would). */
  failures: Map<string, number>;
  close(): Promise<void>;
}

export function benchReranker(spec: string): BenchReranker {
  const http = /^https?:\/\//.test(spec);
  const settings = loadMemorySettings({
    MEMORY_RERANK_TIMEOUT_MS: '30000',
    ...process.env,
    MEMORY_RERANKER: http ? 'http' : 'onnx',
    ...(http ? { MEMORY_RERANK_URL: spec } : { MEMORY_RERANK_DIR: spec }),
  });
  const setup = rerankSetup(settings);
  if (!setup.config) throw new Error(`--reranker: ${setup.problems.join('; ')}`);
  // Embeddings are computed by the bench itself; this pool only runs the cross-encoder.
  const embedder = new Embedder({ provider: 'none' }, { threads: 1, queryTimeoutMs: 60_000 });
  const failures = new Map<string, number>();
  const stage = new RerankStage(setup, embedder, pino({ level: 'silent' }), (outcome) => {
    if (outcome !== 'ok') failures.set(outcome, (failures.get(outcome) ?? 0) + 1);
  });
  return { stage, failures, close: () => embedder.close() };
}
