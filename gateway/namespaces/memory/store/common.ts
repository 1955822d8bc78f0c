import { createHash } from 'node:crypto';
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

/**
 * English function words. They occur in a large share of all memories, so OR-ing them into
 * the keyword arm makes it rank most of a key's rows (the bench measured this) while
 * adding nothing to the order; Postgres' 'english' configuration drops the same kind.
 */
const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she should ' +
    'so some such than that the their theirs them themselves then there these they this those through to ' +
    'too under until up very was we were what when where which while who whom why will with would you ' +
    'your yours yourself yourselves'
  ).split(' '),
);

/**
 * Words for the keyword arm; anything else (quotes, operators) is dropped, so no query can
 * be malformed. Function words are dropped too unless the query has nothing else.
 */
export function searchTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])];
  const content = words.filter((word) => !STOPWORDS.has(word));
  return (content.length > 0 ? content : words).slice(0, 64);
}

export class CursorError extends Error {
  constructor() {
    super('cursor is not valid here; pass next_cursor from the previous page unchanged');
  }
}

export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** Decodes a cursor made by encodeCursor with the given tag as its first part. */
export function decodeCursor(cursor: string, tag: string, length: number): (string | number)[] {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new CursorError();
  }
  if (
    !Array.isArray(parts) ||
    parts.length !== length ||
    parts[0] !== tag ||
    !parts.every((p) => typeof p === 'number' || typeof p === 'string')
  ) {
    throw new CursorError();
  }
  return parts as (string | number)[];
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
  expires_at: number | null;
  embedding_status: string;
}

/** SQLite hands tags and metadata back as JSON text, Postgres as arrays and objects. */
export function toRecord(row: MemoryRow): MemoryRecord {
  return {
    id: row.public_id,
    content: row.content,
    tags: typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
    namespace: row.namespace,
    key: row.key,
    pinned: Boolean(row.pinned),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    embeddingStatus: row.embedding_status as EmbeddingStatus,
  };
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

export const RRF_K = 60;

/** Keeps a page under the response size budget; always returns at least one row so paging advances. */
export function pageBySize(
  rows: MemoryRow[],
  limit: number,
  maxBytes: number,
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
  return { memories, nextCursor: more ? encodeCursor(['x', lastId]) : null };
}
