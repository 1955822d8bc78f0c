/**
 * The one interface both memory stores (SQLite, Postgres) implement. Every method takes
 * the caller's api key id and scopes every statement by it: a row of another key is
 * indistinguishable from a missing one. Times are epoch milliseconds.
 */
export type EmbeddingStatus = 'pending' | 'ready' | 'failed';
export type TagMode = 'any' | 'all';
export type SearchMode = 'hybrid' | 'keyword' | 'vector';

export interface MemoryRecord {
  id: string;
  content: string;
  tags: string[];
  metadata: Record<string, string>;
  namespace: string;
  key: string | null;
  pinned: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * When what the memory states happened (event time), as the writer said; the write time
   * when it said nothing. Recency, newest first and supersession go by it.
   */
  occurredAt: number;
  /**
   * The store's write sequence (its row number): orders memories of the same event time by
   * when they were first written. Internal; never shown to callers.
   */
  seq: number;
  expiresAt: number | null;
  embeddingStatus: EmbeddingStatus;
  /** The id of the newer memory that replaced this one, or null while it is current. */
  supersededBy: string | null;
}

export interface MemoryFilter {
  namespace?: string;
  tags?: string[];
  tagMode?: TagMode;
  metadata?: Record<string, string>;
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
  occurredAfter?: number;
  occurredBefore?: number;
  pinned?: boolean;
  includeExpired?: boolean;
  /** Leaves out memories a newer one superseded (search does unless asked not to). */
  currentOnly?: boolean;
}

export interface WriteInput {
  content: string;
  contentHash: string;
  tags: string[];
  metadata: Record<string, string>;
  namespace: string;
  key: string | null;
  expiresAt: number | null;
  pinned: boolean;
  /**
   * Event time. Absent: the write time for a new memory; for an upsert onto a stored one,
   * its event time when the content stays, the write time when the content changes.
   */
  occurredAt?: number;
  dedupe: 'exact' | 'none';
  /** The id of an older memory of the same key this one replaces; it must exist. */
  supersedes?: string;
}

export interface WriteResult {
  memory: MemoryRecord;
  status: 'created' | 'updated' | 'unchanged';
  evictedIds: string[];
}

/**
 * What a batch wrote: one result per input up to the first refused one. A refusal (the cap,
 * or a `supersedes` that names nothing) stops the batch there; the writes before it are
 * committed, the refused one and the rest are not written.
 */
export interface WriteManyOutcome {
  results: WriteResult[];
  refused: { index: number; error: Error } | null;
}

export interface UpdatePatch {
  content?: { text: string; hash: string };
  tags?: string[];
  /** Merge-patch: a null value removes that key. */
  metadata?: Record<string, string | null>;
  namespace?: string;
  expiresAt?: number | null;
  pinned?: boolean;
  /** Event time; absent keeps it, unless the content changes (then it is the update's time). */
  occurredAt?: number;
}

export interface Page {
  limit: number;
  cursor?: string;
  order?: 'newest' | 'oldest';
}

export interface SearchRequest {
  /** The query's content words and their stems (see text.ts). */
  words: string[];
  stems: string[];
  /** Query embedding; null runs the keyword arm only. */
  vector: Float32Array | null;
  mode: SearchMode;
  /** How many candidates each arm hands to the ranking. */
  fetch: number;
  filter: MemoryFilter;
}

/** One memory an arm found, with what ranking needs; the order is the ranking's job. */
export interface Candidate {
  memory: MemoryRecord;
  /** The stored content's hash (normalised text), which fixes its words: ranking keeps their stems by it. */
  contentHash: string;
  /** Cosine similarity to the query vector, null when either has no vector. */
  cosine: number | null;
  /** The keyword arm's raw score (FTS5 bm25 negated, or Postgres ts_rank_cd), null when it did not match. */
  keywordScore: number | null;
  /** 1-based ranks within each arm, null when that arm did not return it. */
  vectorRank: number | null;
  keywordRank: number | null;
}

export interface SearchCandidates {
  candidates: Candidate[];
  /** How many memories the key holds (for idf and for an honest empty answer). */
  total: number;
  /** Per query stem: in how many of the key's memories it occurs. */
  documentFrequency: Record<string, number>;
}

/** Thrown by a write whose `supersedes` names no memory of the key; nothing is written. */
export class SupersedesNotFoundError extends Error {
  constructor(readonly id: string) {
    super(
      `supersedes: no memory ${id} in this key; pass the id of an existing memory (memory_search or memory_list show ids)`,
    );
  }
}

export interface MemoryStats {
  count: number;
  byNamespace: Record<string, number>;
  pinned: number;
  pendingEmbeddings: number;
  failedEmbeddings: number;
  oldestAt: number | null;
  newestAt: number | null;
}

export interface EmbeddingModelInfo {
  model: string;
  dimensions: number;
}

export interface PendingEmbedding {
  rowId: number;
  content: string;
  contentHash: string;
}

/** What embedding one pending row produced: its vector, or null when the provider refused the text. */
export interface PendingOutcome {
  rowId: number;
  contentHash: string;
  vector: Float32Array | null;
}

/** Thrown when every memory of a key is pinned and the cap is reached. */
export class MemoryLimitError extends Error {
  constructor(readonly max: number) {
    super(`memory limit reached (${max}); delete or unpin memories first`);
  }
}

export interface MemoryStore {
  readonly engine: 'sqlite' | 'postgres';
  write(apiKeyId: string, input: WriteInput, maxPerKey: number, now: number): Promise<WriteResult>;
  /**
   * Writes many memories of one key in one transaction, each by the same rule as write()
   * (the import command). With `evict: false` a write that would evict is refused with
   * MemoryLimitError instead; the writes before it in the batch are kept only if the caller
   * commits them (see WriteManyOutcome).
   */
  writeMany(
    apiKeyId: string,
    inputs: WriteInput[],
    options: { maxPerKey: number; evict: boolean },
    now: number,
  ): Promise<WriteManyOutcome>;
  get(apiKeyId: string, id: string, now: number): Promise<MemoryRecord | null>;
  update(apiKeyId: string, id: string, patch: UpdatePatch, now: number): Promise<MemoryRecord | null>;
  delete(apiKeyId: string, id: string, now: number): Promise<boolean>;
  list(
    apiKeyId: string,
    filter: MemoryFilter,
    page: Page,
    now: number,
  ): Promise<{ memories: MemoryRecord[]; nextCursor: string | null }>;
  /** Matches by ids or by filter; deletes only when dryRun is false. `ids` lists at most 100. */
  deleteMany(
    apiKeyId: string,
    target: { ids: string[] } | { filter: MemoryFilter },
    options: { dryRun: boolean; includePinned: boolean },
    now: number,
  ): Promise<{ matched: number; deleted: number; ids: string[] }>;
  /** Oldest first by insertion; stops early once `maxBytes` of content is gathered. */
  export(
    apiKeyId: string,
    options: { namespace?: string; cursor?: string; limit: number; maxBytes: number },
    now: number,
  ): Promise<{ memories: MemoryRecord[]; nextCursor: string | null }>;
  stats(apiKeyId: string, now: number): Promise<MemoryStats>;
  /** Memories of every key still waiting for their embedding (the partial index memories_pending answers it). */
  pendingEmbeddingCount(): Promise<number>;
  search(apiKeyId: string, request: SearchRequest, now: number): Promise<SearchCandidates>;
  /**
   * Marks the memories of the same key and namespace whose vector lies within
   * `minSimilarity` cosine of each given memory's and that come before it in event order
   * as superseded by it, and the given memory as superseded by the latest such one after it
   * (the automatic update rule; see autoSupersedeOrder). Returns how many were marked.
   */
  supersedeSimilar(rowIds: number[], minSimilarity: number): Promise<number>;

  /** The model whose vectors the store holds; null before the first vector is stored. */
  embeddingModel(): Promise<EmbeddingModelInfo | null>;
  /**
   * Adopts a model for an empty vector space; returns false (and changes nothing) if the
   * store already holds vectors of another model or size.
   */
  adoptEmbeddingModel(info: EmbeddingModelInfo): Promise<boolean>;
  /** Drops every vector, marks every memory pending and adopts `info` (the re-embed command). */
  resetEmbeddings(info: EmbeddingModelInfo): Promise<number>;
  pendingEmbeddings(limit: number, afterRowId: number): Promise<PendingEmbedding[]>;
  /** Stores a vector only if the content is still the one embedded; false when it changed. */
  setEmbedding(rowId: number, contentHash: string, vector: Float32Array): Promise<boolean>;
  markEmbeddingFailed(rowId: number, contentHash: string): Promise<void>;
  /**
   * A batch of setEmbedding / markEmbeddingFailed calls; rows whose content changed since
   * they were read are skipped. Returns how many vectors were stored.
   */
  storeEmbeddings(outcomes: PendingOutcome[]): Promise<number>;
  /** Deletes rows whose expiry passed; returns how many. */
  purgeExpired(now: number): Promise<number>;
  close(): Promise<void>;
}

/** A write the plan refused (the cap, an unknown `supersedes`), as opposed to a store failure. */
export function refusal(error: unknown): Error | null {
  return error instanceof MemoryLimitError || error instanceof SupersedesNotFoundError ? error : null;
}
