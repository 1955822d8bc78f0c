import type { Logger } from 'pino';
import { ToolError } from '../../mcp/tool.ts';
import { isStoreUnreachable } from '../../store/unreachable.ts';
import type { Embedder } from './embeddings/embedder.ts';
import { EmbedderUnavailable } from './embeddings/embedder.ts';
import type { EmbeddingIndexer } from './embeddings/indexer.ts';
import { asksAboutNow, firstPersonQuery } from './query-voice.ts';
import { type Ranked, rankCandidates } from './ranking.ts';
import type { RerankStage } from './rerank/stage.ts';
import { type MemorySettings, SEARCH_DEFAULTS } from './settings.ts';
import { CursorError } from './store/common.ts';
import { PgvectorUnusableError } from './store/postgres-pgvector.ts';
import { queryWords } from './store/text.ts';
import {
  type MemoryFilter,
  MemoryLimitError,
  type MemoryRecord,
  type MemoryStore,
  type SearchMode,
  SupersedesNotFoundError,
  type UpdatePatch,
  type WriteInput,
  type WriteResult,
} from './store/types.ts';
import type { WriteDecider, WriteDecision } from './write-decider.ts';

export interface SearchArgs {
  query: string;
  limit: number;
  minScore?: number;
  mode?: SearchMode;
  weights?: { vector: number; keyword: number };
  includeWeak: boolean;
  recency?: { halfLifeDays: number; weight: number };
  filter: MemoryFilter;
  /** Ends a rerank call with the MCP request; the write decider's own searches never rerank. */
  signal?: AbortSignal;
  rerank?: boolean;
}

export interface SearchOutcome {
  mode: SearchMode;
  ranked: Ranked;
  /** Memories the key holds. */
  total: number;
  degraded?: string;
  note?: string;
}

/** Each arm hands at least this many candidates to the ranking, however small the limit. */
const MIN_FETCH = 40;

/** What the tools call: the store plus the embedding side (background indexing, query vectors). */
export class MemoryService {
  private pgvectorReported = false;

  constructor(
    readonly settings: MemorySettings,
    readonly store: MemoryStore,
    readonly embedder: Embedder,
    readonly indexer: EmbeddingIndexer,
    private readonly log: Logger,
    private readonly decider: WriteDecider | null = null,
    readonly reranker: RerankStage | null = null,
  ) {}

  get defaults() {
    return SEARCH_DEFAULTS[this.settings.MEMORY_EMBEDDINGS];
  }

  /** Turns store failures into messages an agent can act on; nothing else leaks. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ToolError) throw error;
      if (error instanceof MemoryLimitError) throw new ToolError('MEMORY_LIMIT', error.message);
      if (error instanceof CursorError) throw new ToolError('INVALID_CURSOR', error.message);
      if (error instanceof SupersedesNotFoundError) throw new ToolError('NOT_FOUND', error.message);
      if (error instanceof PgvectorUnusableError) {
        // Said once in the log (an operator's fix), and to every call (the agent's answer).
        if (!this.pgvectorReported) this.log.error(`memory cannot use its Postgres store: ${error.message}`);
        this.pgvectorReported = true;
        throw new ToolError('SETTINGS_INVALID', `memory is not available: ${error.message}`);
      }
      if (isStoreUnreachable(error)) {
        this.log.warn({ err: error }, 'memory store unreachable');
        throw new ToolError('STORE_UNAVAILABLE', 'memory store unavailable; retry later');
      }
      throw error;
    }
  }

  async write(apiKeyId: string, input: WriteInput): Promise<WriteResult & { decision?: WriteDecision }> {
    let decision: WriteDecision | undefined;
    if (this.decider && input.key === null && input.supersedes === undefined) {
      decision = await this.decider.decide(input.content, await this.related(apiKeyId, input));
      if (decision.action === 'skip') {
        const same = await this.store.get(apiKeyId, decision.target!, Date.now());
        if (same) return { memory: same, status: 'unchanged', evictedIds: [], decision };
      }
      if (decision.action === 'update' || decision.action === 'delete')
        input = { ...input, supersedes: decision.target! };
    }
    const result = await this.store.write(apiKeyId, input, this.settings.MEMORY_MAX_PER_KEY, Date.now());
    if (result.memory.embeddingStatus === 'pending') this.indexer.written();
    return decision ? { ...result, decision } : result;
  }

  /**
   * The current memories of the namespace that match a new one well (what the write decider
   * is shown). A memory whose vector is still pending (written moments ago, or during a burst
   * the indexer stands aside for) can only match by its words, which alone rank as weak: it is
   * shown when its words match, so a quick second write still meets the first.
   */
  private async related(apiKeyId: string, input: WriteInput) {
    const found = await this.search(apiKeyId, {
      query: input.content.slice(0, 1000),
      limit: 5,
      includeWeak: true,
      rerank: false,
      filter: { namespace: input.namespace, currentOnly: true },
    });
    return found.ranked.hits
      .filter((hit) => !hit.weak || hit.memory.embeddingStatus === 'pending')
      .map((hit) => hit.memory);
  }

  async update(apiKeyId: string, id: string, patch: UpdatePatch): Promise<MemoryRecord | null> {
    const memory = await this.store.update(apiKeyId, id, patch, Date.now());
    if (memory?.embeddingStatus === 'pending') this.indexer.written();
    return memory;
  }

  /** Why the vector arm cannot run now, or null when it can. */
  private vectorProblem(): string | null {
    if (!this.embedder.enabled) return 'embeddings are off (MEMORY_EMBEDDINGS=none)';
    return this.indexer.mismatch;
  }

  async search(apiKeyId: string, args: SearchArgs): Promise<SearchOutcome> {
    const mode = args.mode ?? (this.embedder.enabled ? 'hybrid' : 'keyword');
    const { vector, degraded } = await this.queryVector(apiKeyId, args.query, mode);
    const { words, stems } = queryWords(args.query);
    const stage = args.rerank === false ? null : this.reranker;
    // The first stage ranks enough hits for the reranker's top N, however small the limit.
    const keep = Math.max(args.limit, stage?.topN ?? 0);
    const found = await this.store.search(
      apiKeyId,
      {
        words,
        stems,
        vector,
        mode: degraded ? 'keyword' : mode,
        fetch: Math.max(keep * 4, MIN_FETCH),
        filter: args.filter,
      },
      Date.now(),
    );
    const minScore = args.minScore ?? this.settings.MEMORY_MIN_SCORE;
    const ranked = rankCandidates(
      found,
      {
        stems,
        mode: degraded ? 'keyword' : mode,
        limit: keep,
        includeWeak: args.includeWeak,
        asksNow: asksAboutNow(args.query),
        ...(minScore === undefined ? {} : { minScore }),
        ...(args.recency ? { recency: args.recency } : {}),
        ...(args.weights ? { weights: args.weights } : {}),
      },
      this.defaults,
      Date.now(),
    );
    const reranked = stage
      ? await stage.apply(args.query, ranked, args.limit, args.signal ?? new AbortController().signal)
      : { ranked: { ...ranked, hits: ranked.hits.slice(0, args.limit) } };
    // The note reads the first stage's calibrated judgement, which reranking leaves as it was.
    const note = searchNote(reranked.ranked, found.total, this.defaults.weakBelow);
    const why = [degraded, reranked.degraded].filter(Boolean).join('; ');
    return {
      mode,
      ranked: reranked.ranked,
      total: found.total,
      ...(note ? { note } : {}),
      ...(why ? { degraded: why } : {}),
    };
  }

  /** The query's embedding, or why the search runs on keywords alone. */
  private async queryVector(
    apiKeyId: string,
    query: string,
    mode: SearchMode,
  ): Promise<{ vector: Float32Array | null; degraded?: string }> {
    if (mode === 'keyword') return { vector: null };
    let problem = this.vectorProblem();
    if (!problem) {
      try {
        return { vector: await this.embedder.embedQuery(firstPersonQuery(query), apiKeyId) };
      } catch (error) {
        problem = error instanceof EmbedderUnavailable ? error.message : 'the embedder failed';
        this.log.warn({ err: error }, 'query embedding failed; searching keywords only');
      }
    }
    if (mode === 'vector')
      throw new ToolError('SEMANTIC_UNAVAILABLE', `semantic search unavailable: ${problem}`);
    return { vector: null, degraded: `semantic search unavailable: ${problem}; keyword results only` };
  }

  embeddingInfo() {
    const model = this.embedder.model;
    const problem = this.vectorProblem() ?? this.indexer.lastError;
    return {
      provider: this.settings.MEMORY_EMBEDDINGS,
      model: model?.model ?? null,
      dimensions: model?.dimensions ?? null,
      min_score_default: this.settings.MEMORY_MIN_SCORE ?? null,
      fusion: this.defaults.fusion,
      vector_weight: this.defaults.vectorWeight,
      weak_below: this.defaults.weakBelow,
      available: this.embedder.enabled && problem === null,
      problem,
    };
  }
}

/**
 * What an agent should read beside the hits. Never "nothing is stored" unless the key
 * holds nothing: an empty or weak answer says how much is stored and how to look closer.
 */
export function searchNote(ranked: Ranked, total: number, weakBelow: number): string | undefined {
  const stored = `${total} ${total === 1 ? 'memory is' : 'memories are'} stored for this key`;
  if (total === 0) return 'This key holds no memories yet.';
  if (ranked.hits.length === 0) {
    const best = ranked.best === null ? 'no candidate matched' : `the best candidate scored ${ranked.best}`;
    return `${stored}, but none matched this query well enough (${best}; weak is under ${weakBelow}). The answer may not be stored; pass include_weak: true to see the closest candidates.`;
  }
  if (ranked.weak)
    return `The best match is weak (relevance ${ranked.best}, under ${weakBelow}): the answer may not be stored. ${stored}.`;
  return undefined;
}
