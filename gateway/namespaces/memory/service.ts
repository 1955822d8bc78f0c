import type { Logger } from 'pino';
import { ToolError } from '../../mcp/tool.ts';
import type { Embedder } from './embeddings/embedder.ts';
import { EmbedderUnavailable } from './embeddings/embedder.ts';
import type { EmbeddingIndexer } from './embeddings/indexer.ts';
import { type MemorySettings, SEARCH_DEFAULTS } from './settings.ts';
import { CursorError } from './store/common.ts';
import {
  type MemoryFilter,
  MemoryLimitError,
  type MemoryRecord,
  type MemoryStore,
  type SearchHit,
  type SearchMode,
  type UpdatePatch,
  type WriteInput,
  type WriteResult,
} from './store/types.ts';

export interface SearchArgs {
  query: string;
  terms: string[];
  limit: number;
  minScore?: number;
  mode?: SearchMode;
  weights?: { vector: number; keyword: number };
  filter: MemoryFilter;
}

export interface SearchOutcome {
  mode: SearchMode;
  hits: SearchHit[];
  degraded?: string;
  emptyNote: string;
}

/** What the tools call: the store plus the embedding side (background indexing, query vectors). */
export class MemoryService {
  constructor(
    readonly settings: MemorySettings,
    readonly store: MemoryStore,
    readonly embedder: Embedder,
    readonly indexer: EmbeddingIndexer,
    private readonly log: Logger,
  ) {}

  get defaults() {
    return SEARCH_DEFAULTS[this.settings.MEMORY_EMBEDDINGS];
  }

  get minScoreDefault(): number {
    return this.settings.MEMORY_MIN_SCORE ?? this.defaults.minScore;
  }

  /** Turns store failures into messages an agent can act on; nothing else leaks. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ToolError) throw error;
      if (error instanceof MemoryLimitError) throw new ToolError('MEMORY_LIMIT', error.message);
      if (error instanceof CursorError) throw new ToolError('INVALID_CURSOR', error.message);
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && /^(ECONN|ETIMEDOUT|EPIPE|57P|08)/.test(code)) {
        this.log.warn({ err: error }, 'memory store unreachable');
        throw new ToolError('STORE_UNAVAILABLE', 'memory store unavailable; retry later');
      }
      throw error;
    }
  }

  async write(apiKeyId: string, input: WriteInput): Promise<WriteResult> {
    const result = await this.store.write(apiKeyId, input, this.settings.MEMORY_MAX_PER_KEY, Date.now());
    if (result.memory.embeddingStatus === 'pending') this.indexer.kick();
    return result;
  }

  async update(apiKeyId: string, id: string, patch: UpdatePatch): Promise<MemoryRecord | null> {
    const memory = await this.store.update(apiKeyId, id, patch, Date.now());
    if (memory?.embeddingStatus === 'pending') this.indexer.kick();
    return memory;
  }

  /** Why the vector arm cannot run now, or null when it can. */
  private vectorProblem(): string | null {
    if (!this.embedder.enabled) return 'embeddings are off (MEMORY_EMBEDDINGS=none)';
    return this.indexer.mismatch;
  }

  async search(apiKeyId: string, args: SearchArgs): Promise<SearchOutcome> {
    const mode = args.mode ?? (this.embedder.enabled ? 'hybrid' : 'keyword');
    const minScore = args.minScore ?? this.minScoreDefault;
    let vector: Float32Array | null = null;
    let degraded: string | undefined;
    if (mode !== 'keyword') {
      let problem = this.vectorProblem();
      if (!problem) {
        try {
          vector = await this.embedder.embedQuery(args.query);
        } catch (error) {
          problem = error instanceof EmbedderUnavailable ? error.message : 'the embedder failed';
          this.log.warn({ err: error }, 'query embedding failed; searching keywords only');
        }
      }
      if (problem) {
        if (mode === 'vector')
          throw new ToolError('SEMANTIC_UNAVAILABLE', `semantic search unavailable: ${problem}`);
        degraded = `semantic search unavailable: ${problem}; keyword results only`;
      }
    }
    const hits = await this.store.search(
      apiKeyId,
      {
        terms: args.terms,
        vector,
        mode: degraded ? 'keyword' : mode,
        limit: args.limit,
        minScore,
        weights: args.weights ?? this.defaults.weights,
        filter: args.filter,
      },
      Date.now(),
    );
    const emptyNote =
      vector === null
        ? 'No memories matched the query words. Nothing relevant is stored.'
        : `No memories matched above a similarity of ${minScore}. Nothing relevant is stored.`;
    return { mode, hits, emptyNote, ...(degraded ? { degraded } : {}) };
  }

  embeddingInfo() {
    const model = this.embedder.model;
    const problem = this.vectorProblem() ?? this.indexer.lastError;
    return {
      provider: this.settings.MEMORY_EMBEDDINGS,
      model: model?.model ?? null,
      dimensions: model?.dimensions ?? null,
      min_score_default: this.minScoreDefault,
      weights_default: { ...this.defaults.weights },
      available: this.embedder.enabled && problem === null,
      problem,
    };
  }
}
