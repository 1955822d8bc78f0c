/**
 * The rerank stage's settings, judged apart from the rest of memory's. The namespace
 * contract refuses every tool of a namespace with a bad setting; a reranker is an optional
 * refinement of search, so a bad rerank setting instead turns reranking off: search answers
 * in first-stage order with `degraded` naming the setting (SETTINGS_INVALID), memory_capabilities
 * lists it, and writes, reads and lists never notice (docs/decisions/0801-memory-rerank-stage.md).
 * Light (no onnxruntime, no HTTP): the namespace reads it at start.
 */
import { basename } from 'node:path';
import { z } from 'zod';
import { parseSettings } from '../../../mcp/namespace-mount.ts';
import type { MemorySettings } from '../settings.ts';
import { crossEncoderFiles } from './files.ts';

export const rerankSettings = z.object({
  MEMORY_RERANKER: z.enum(['none', 'http', 'onnx']).default('none'),
  MEMORY_RERANK_TOP_N: z.coerce.number().int().min(2).max(100).default(30),
  MEMORY_RERANK_URL: z
    .url({
      protocol: /^https?$/,
      error: 'needs a scheme: the full http:// or https:// URL of the rerank endpoint',
    })
    .optional(),
  MEMORY_RERANK_API: z.enum(['cohere', 'tei']).default('cohere'),
  MEMORY_RERANK_MODEL: z.string().min(1).optional(),
  MEMORY_RERANK_API_KEY: z.string().min(1).optional(),
  MEMORY_RERANK_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  MEMORY_RERANK_DIR: z.string().min(1).optional(),
});

type RerankName = keyof z.input<typeof rerankSettings> & keyof MemorySettings;

export type RerankerConfig =
  | {
      kind: 'http';
      api: 'cohere' | 'tei';
      url: string;
      model: string | null;
      apiKey: string | null;
      timeoutMs: number;
      topN: number;
    }
  /** `threads`: the embedding pool's (MEMORY_EMBED_THREADS), which bounds the reranks in flight. */
  | { kind: 'onnx'; dir: string; threads: number; timeoutMs: number; topN: number };

export interface RerankSetup {
  /** What MEMORY_RERANKER asks for, as written (`none` when unset). */
  requested: string;
  /** The reranker to run; null when none was asked for or a setting is bad. */
  config: RerankerConfig | null;
  /** One line per bad rerank setting, naming it; never a value. */
  problems: string[];
}

/** Requirements between settings, once each setting parsed on its own. */
function missing(s: z.output<typeof rerankSettings>, bad: Set<string>): string[] {
  const problems: string[] = [];
  if (s.MEMORY_RERANKER === 'http') {
    if (!s.MEMORY_RERANK_URL && !bad.has('MEMORY_RERANK_URL'))
      problems.push('MEMORY_RERANK_URL: required with MEMORY_RERANKER=http');
    if (s.MEMORY_RERANK_API === 'cohere' && !s.MEMORY_RERANK_MODEL)
      problems.push(
        'MEMORY_RERANK_MODEL: required with MEMORY_RERANK_API=cohere (the shared /rerank body names its model)',
      );
  }
  if (s.MEMORY_RERANKER === 'onnx') {
    if (!s.MEMORY_RERANK_DIR) problems.push('MEMORY_RERANK_DIR: required with MEMORY_RERANKER=onnx');
    else {
      const files = crossEncoderFiles(s.MEMORY_RERANK_DIR);
      if (typeof files === 'string') problems.push(`MEMORY_RERANK_DIR: ${files}`);
    }
  }
  return problems;
}

export function rerankSetup(settings: MemorySettings): RerankSetup {
  const raw: Record<string, string | undefined> = Object.fromEntries(
    Object.keys(rerankSettings.shape).map((name) => [name, settings[name as RerankName]]),
  );
  const requested = typeof raw.MEMORY_RERANKER === 'string' ? raw.MEMORY_RERANKER : 'none';
  const parsed = parseSettings(rerankSettings, raw);
  const s = parsed.settings!;
  const bad = new Set(parsed.problems.map((line) => line.split(':')[0]!));
  const problems = [...parsed.problems, ...missing(s, bad)];
  if (requested === 'none' || problems.length > 0) return { requested, config: null, problems };
  const common = { timeoutMs: s.MEMORY_RERANK_TIMEOUT_MS, topN: s.MEMORY_RERANK_TOP_N };
  const config: RerankerConfig =
    s.MEMORY_RERANKER === 'http'
      ? {
          kind: 'http',
          api: s.MEMORY_RERANK_API,
          url: s.MEMORY_RERANK_URL!,
          model: s.MEMORY_RERANK_MODEL ?? null,
          apiKey: s.MEMORY_RERANK_API_KEY ?? null,
          ...common,
        }
      : { kind: 'onnx', dir: s.MEMORY_RERANK_DIR!, threads: settings.MEMORY_EMBED_THREADS, ...common };
  return { requested, config, problems };
}

/** What memory_stats and memory_capabilities say about the stage; never the key. */
export function rerankInfo(setup: RerankSetup) {
  const { config } = setup;
  return {
    kind: setup.requested,
    active: config !== null,
    api: config?.kind === 'http' ? config.api : null,
    model: config?.kind === 'http' ? config.model : config ? basename(config.dir) : null,
    top_n: config?.topN ?? null,
    problem:
      setup.requested !== 'none' && setup.problems.length > 0
        ? `SETTINGS_INVALID: ${setup.problems.join('; ')}`
        : null,
  };
}
