import { createHash } from 'node:crypto';
// Types only: the tools load this file for the content hash while the gateway idles, and the
// store's own code (types.ts's error classes included) loads with the first memory call.
import type { EmbeddingStatus, MemoryRecord, WriteInput } from './types.ts';

/**
 * The form two writes must share to count as the same memory: Unicode NFC, surrounding
 * whitespace trimmed and inner runs of whitespace collapsed. Case and punctuation count.
 */
export function contentHash(content: string): string {
  const normalised = content.normalize('NFC').trim().replace(/\s+/gu, ' ');
  return createHash('sha256').update(normalised).digest('hex');
}

/**
 * Tags already made: every insert's trigger and every search asks for one, and a SHA-256
 * per memory written was a tenth of the keyword index's JavaScript share of a write.
 */
const TAGS = new Map<string, string>();
const MAX_CACHED_TAGS = 10_000;

/**
 * A short tag of an api key, the same in both stores: SQLite's keyword index prefixes each
 * key's terms with it (sqlite-fts.ts), and Postgres names a key's own vector index by it
 * (postgres-key-index.ts), so neither shows the key id itself.
 */
export function keyTag(apiKeyId: string): string {
  let tag = TAGS.get(apiKeyId);
  if (tag === undefined) {
    tag = `k${createHash('sha256').update(apiKeyId).digest('hex').slice(0, 12)}`;
    if (TAGS.size >= MAX_CACHED_TAGS) TAGS.clear();
    TAGS.set(apiKeyId, tag);
  }
  return tag;
}

/**
 * `content` written as memory_write stores it when the caller gives nothing else: no tags
 * or metadata, namespace "default", no upsert key, no expiry, not pinned, exact dedup.
 */
export function plainWrite(content: string, extra: Partial<WriteInput> = {}): WriteInput {
  return {
    content,
    contentHash: contentHash(content),
    tags: [],
    metadata: {},
    namespace: 'default',
    key: null,
    expiresAt: null,
    pinned: false,
    dedupe: 'exact',
    ...extra,
  };
}

export class CursorError extends Error {
  constructor() {
    super('cursor is not valid here; pass next_cursor from the previous page unchanged');
  }
}

export interface MemoryRow {
  id: number;
  public_id: string;
  namespace: string;
  key: string | null;
  content: string;
  content_hash: string;
  tags: string | string[];
  metadata: string | Record<string, string>;
  pinned: number | boolean;
  created_at: number;
  updated_at: number;
  occurred_at: number;
  expires_at: number | null;
  embedding_status: string;
  superseded_by?: string | null;
}

/** Stored JSON text; most memories have no tags or metadata, which need no parse. */
function parseStored<T>(text: string): T {
  if (text === '[]') return [] as T;
  if (text === '{}') return {} as T;
  return JSON.parse(text) as T;
}

/** SQLite hands tags and metadata back as JSON text, Postgres as arrays and objects. */
export function toRecord(row: MemoryRow): MemoryRecord {
  return {
    id: row.public_id,
    content: row.content,
    tags: typeof row.tags === 'string' ? parseStored(row.tags) : row.tags,
    metadata: typeof row.metadata === 'string' ? parseStored(row.metadata) : row.metadata,
    namespace: row.namespace,
    key: row.key,
    pinned: Boolean(row.pinned),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    occurredAt: Number(row.occurred_at),
    seq: Number(row.id),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    embeddingStatus: row.embedding_status as EmbeddingStatus,
    supersededBy: row.superseded_by ?? null,
  };
}

/** A stored memory as the write plan sees it: the record plus what only the row knows. */
export interface StoredMemory {
  rowId: number;
  contentHash: string;
  memory: MemoryRecord;
}

export function storedMemory(row: MemoryRow): StoredMemory;
export function storedMemory(row: MemoryRow | undefined): StoredMemory | undefined;
export function storedMemory(row: MemoryRow | undefined): StoredMemory | undefined {
  return row && { rowId: Number(row.id), contentHash: row.content_hash, memory: toRecord(row) };
}

/**
 * Event order: by event time, then by write sequence, so two memories of the same event
 * time keep the order they were written in. Negative when `a` comes first (is older).
 */
export function eventOrder(a: MemoryRecord, b: MemoryRecord): number {
  return a.occurredAt - b.occurredAt || a.seq - b.seq;
}

export function unionTags(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Applies an RFC 7386 merge-patch of flat string values; keys come out sorted so equal maps compare equal. */
export function mergeMetadata(
  current: Record<string, string>,
  patch: Record<string, string | null>,
): Record<string, string> {
  const merged: Record<string, string> = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return sortedMetadata(merged);
}

export function sortedMetadata(metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Keeps a page under the response size budget; always returns at least one row so paging
 * advances. `cursor` makes the next page's cursor from its parts (see cursor.ts).
 */
export function pageBySize(
  rows: MemoryRow[],
  limit: number,
  maxBytes: number,
  cursor: (parts: (string | number)[]) => string,
): { memories: MemoryRecord[]; nextCursor: string | null } {
  const memories: MemoryRecord[] = [];
  let bytes = 0;
  let lastId = 0;
  for (const row of rows.slice(0, limit)) {
    const record = toRecord(row);
    const size = Buffer.byteLength(JSON.stringify(record));
    if (memories.length > 0 && bytes + size > maxBytes) break;
    memories.push(record);
    bytes += size;
    lastId = Number(row.id);
  }
  const more = memories.length < rows.length;
  return { memories, nextCursor: more ? cursor(['x', lastId]) : null };
}
