import { z } from 'zod';
import { ConfigError } from '../../config.ts';

const positiveInt = z.coerce.number().int().positive();

const memoryEnv = z.object({
  MEMORY_EMBEDDINGS: z.enum(['local', 'openai', 'none']).default('local'),
  EMBEDDINGS_URL: z.url({ protocol: /^https?$/ }).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_DIMENSIONS: z.coerce.number().int().min(1).max(8192).optional(),
  MEMORY_MAX_PER_KEY: positiveInt.default(1000),
  MEMORY_MAX_CONTENT_CHARS: z.coerce.number().int().min(100).max(100_000).default(8000),
  MEMORY_MIN_SCORE: z.coerce.number().min(0).max(1).optional(),
  MEMORY_EMBED_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  MEMORY_EMBED_NICE: z.coerce.number().int().min(0).max(19).default(10),
  MEMORY_EMBED_TIMEOUT_MS: positiveInt.default(10_000),
  MEMORY_QUERY_EMBED_TIMEOUT_MS: positiveInt.default(5_000),
  MEMORY_EMBED_RETRY_MS: positiveInt.default(30_000),
  MEMORY_PURGE_INTERVAL_MS: positiveInt.default(60_000),
  // Per listener thread; SQLite store only (see sqlite-bit-index.ts).
  MEMORY_VECTOR_CACHE_MB: positiveInt.default(512),
});

export type MemorySettings = z.output<typeof memoryEnv>;

/**
 * Per-provider search defaults. `local` comes from `npm run bench -- memory` on 10k WordNet
 * definitions and 500 example-sentence queries (raw / lemma-masked) with USE-lite:
 * - weights 1:10 had the best mean MRR of the fusions tried (raw 0.508, masked 0.125, near
 *   keyword-only's 0.52 / 0.128) with more found (recall@10 0.80 / 0.228 against keyword's
 *   0.778 / 0.212); equal weights ranked worse (MRR 0.41 / 0.097) because USE-lite's
 *   vector arm alone finds little (recall@10 0.38 / 0.12).
 * - floor 0.4 is the highest that keeps 95% of the vector arm's correct hits (it keeps 98%;
 *   0.45 keeps 90%). USE-lite scores unrelated text high, so a floor cannot tell "nothing
 *   stored": at 0.4 only 1% of unanswerable queries lose all vector hits.
 * `openai` keeps the origin's figures for text-embedding-3-small (the bench has no network
 * to measure it). See docs/decisions.md, Memory.
 */
export const SEARCH_DEFAULTS = {
  local: { minScore: 0.4, weights: { vector: 1, keyword: 10 } },
  openai: { minScore: 0.35, weights: { vector: 1, keyword: 1 } },
  none: { minScore: 0, weights: { vector: 0, keyword: 1 } },
} as const;

/** Parsed once at start; a bad value stops the gateway naming the variable. */
export function loadMemorySettings(env: Readonly<Record<string, string | undefined>>): MemorySettings {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== '' && value !== undefined),
  );
  const parsed = memoryEnv.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid memory configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
