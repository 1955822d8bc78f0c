import { z } from 'zod';
import { ConfigError } from '../../config.ts';
import { parseSettings } from '../../mcp/namespace-mount.ts';
import type { RankSettings } from './ranking.ts';

const positiveInt = z.coerce.number().int().positive();

/** The memory namespace's settings, parsed from the environment by the namespace contract. */
export const memorySettings = z.object({
  MEMORY_EMBEDDINGS: z.enum(['local', 'minilm', 'openai', 'none']).default('minilm'),
  // With `minilm` and no model set up yet, the gateway fetches it in the background (`off`: only `fetch-model` does).
  MEMORY_MODEL_FETCH: z.enum(['auto', 'off']).default('auto'),
  // Where `minilm` is set up by `npm run memory -- fetch-model`; default <repo>/.cache/models.
  MEMORY_MODEL_DIR: z.string().min(1).optional(),
  EMBEDDINGS_URL: z.url({ protocol: /^https?$/ }).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_DIMENSIONS: z.coerce.number().int().min(1).max(8192).optional(),
  MEMORY_WRITE_DECIDER: z.enum(['none', 'llm']).default('none'),
  MEMORY_LLM_URL: z.url({ protocol: /^https?$/ }).optional(),
  MEMORY_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  MEMORY_LLM_API_KEY: z.string().min(1).optional(),
  MEMORY_MAX_PER_KEY: positiveInt.default(1000),
  MEMORY_MAX_CONTENT_CHARS: z.coerce.number().int().min(100).max(100_000).default(8000),
  MEMORY_MIN_SCORE: z.coerce.number().min(0).max(1).optional(),
  // Cosine over which a newer memory supersedes an older one of the same namespace; 1 is off.
  MEMORY_SUPERSEDE_SIMILARITY: z.coerce.number().min(0).max(1).optional(),
  MEMORY_EMBED_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  MEMORY_EMBED_NICE: z.coerce.number().int().min(0).max(19).default(10),
  MEMORY_EMBED_TIMEOUT_MS: positiveInt.default(10_000),
  MEMORY_QUERY_EMBED_TIMEOUT_MS: positiveInt.default(5_000),
  MEMORY_EMBED_RETRY_MS: positiveInt.default(30_000),
  MEMORY_PURGE_INTERVAL_MS: positiveInt.default(60_000),
  // Per listener thread; SQLite store only (see sqlite-bit-index.ts).
  MEMORY_VECTOR_CACHE_MB: positiveInt.default(512),
  // Postgres store only: a key with this many memories gets its own partial HNSW index; 0 is never (decision 1103).
  // KEY_INDEX_MIN_VECTORS of store/postgres-key-index.ts (a test holds them equal), written
  // out: settings are read before the store loads, at a namespace's first call (decision 0190).
  MEMORY_KEY_INDEX_VECTORS: z.coerce.number().int().min(0).default(10_000),
  // The rerank stage (off by default). Taken as text here and judged by rerank/config.ts:
  // a bad one turns reranking off with a reason instead of refusing every memory tool.
  MEMORY_RERANKER: z.string().optional(),
  MEMORY_RERANK_TOP_N: z.string().optional(),
  MEMORY_RERANK_URL: z.string().optional(),
  MEMORY_RERANK_API: z.string().optional(),
  MEMORY_RERANK_MODEL: z.string().optional(),
  MEMORY_RERANK_API_KEY: z.string().optional(),
  MEMORY_RERANK_TIMEOUT_MS: z.string().optional(),
  MEMORY_RERANK_DIR: z.string().optional(),
});

export type MemorySettings = z.output<typeof memorySettings>;

/**
 * Per-provider search settings (see ranking.ts for what each means). `floor` and `full`
 * describe the embedder's cosine scale; the rest were chosen on the tuning halves of the
 * evaluation sets by `npm run bench -- memory-quality` (docs/decisions/0102-conversation-quality-set.md,
 * 0301-memory-default-never-under-vector.md). `supersedeAbove` is the cosine over which a newer memory of the same key and
 * namespace marks an older one superseded (1 turns the rule off).
 * `openai` has no local measurement (no network here); its scale is text-embedding-3-small's.
 */
export interface ProviderSearchDefaults extends RankSettings {
  supersedeAbove: number;
}

export const SEARCH_DEFAULTS: Record<MemorySettings['MEMORY_EMBEDDINGS'], ProviderSearchDefaults> = {
  local: {
    fusion: 'convex',
    vectorWeight: 0.9,
    floor: 0.106,
    full: 0.584,
    weakBelow: 0.55,
    hideBelow: 0.12,
    newerWithin: 0,
    newerWithinNow: 0.4,
    supersedeAbove: 0.8,
  },
  // Chosen on both sets' tuning halves under the rule that hybrid never loses to its vector
  // arm or to plain cosine (docs/decisions/0301-memory-default-never-under-vector.md): keywords break ties and rank memories not
  // embedded yet, and nothing is hidden as noise (weak hits are flagged instead).
  minilm: {
    fusion: 'convex',
    vectorWeight: 1,
    floor: 0.065,
    full: 0.43,
    weakBelow: 0.775,
    hideBelow: 0,
    newerWithin: 0,
    newerWithinNow: 0,
    changedWithin: 0,
    changedWithinNow: 0.75,
    supersedeAbove: 1,
  },
  openai: {
    fusion: 'convex',
    vectorWeight: 0.7,
    floor: 0.1,
    full: 0.6,
    weakBelow: 0.3,
    hideBelow: 0.1,
    newerWithin: 0,
    newerWithinNow: 0,
    supersedeAbove: 1,
  },
  none: {
    fusion: 'convex',
    vectorWeight: 0,
    floor: 0,
    full: 1,
    weakBelow: 0.3,
    hideBelow: 0.01,
    newerWithin: 0,
    newerWithinNow: 0,
    supersedeAbove: 1,
  },
};

/**
 * For `npm run memory`: a bad value stops the command naming the variable. The gateway parses
 * the same schema through the namespace contract, which mounts the namespace and refuses its tools.
 */
export function loadMemorySettings(env: Readonly<Record<string, string | undefined>>): MemorySettings {
  const { settings, problems } = parseSettings(memorySettings, env);
  if (problems.length > 0 || !settings)
    throw new ConfigError(`invalid memory configuration: ${problems.join('; ')}`);
  return settings;
}
