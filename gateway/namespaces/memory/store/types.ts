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
  expiresAt: number | null;
  embeddingStatus: EmbeddingStatus;
}

export interface MemoryFilter {
  namespace?: string;
  tags?: string[];
  tagMode?: TagMode;
  metadata?: Record<string, string>;
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
  pinned?: boolean;
  includeExpired?: boolean;
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
  dedupe: 'exact' | 'none';
}

export interface WriteResult {
  memory: MemoryRecord;
  status: 'created' | 'updated' | 'unchanged';
  evictedIds: string[];
}

export interface UpdatePatch {
  content?: { text: string; hash: string };
  tags?: string[];
  /** Merge-patch: a null value removes that key. */
  metadata?: Record<string, string | null>;
  namespace?: string;
  expiresAt?: number | null;
  pinned?: boolean;
}

export interface Page {
  limit: number;
  cursor?: string;
  order?: 'newest' | 'oldest';
}

export interface SearchRequest {
  /** Tokens for the keyword arm, already split into words (the store quotes them). */
  terms: string[];
  /** Query embedding; null runs the keyword arm only. */
  vector: Float32Array | null;
  mode: SearchMode;
  limit: number;
  minScore: number;
  weights: { vector: number; keyword: number };
  filter: MemoryFilter;
}

export interface SearchHit {
  memory: MemoryRecord;
  /** Cosine similarity from the vector arm, null when only the keyword arm found it. */
  score: number | null;
  keywordScore: number | null;
  rrf: number;
  source: 'vector' | 'keyword' | 'both';
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
  search(apiKeyId: string, request: SearchRequest, now: number): Promise<SearchHit[]>;

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
