import type { MemoryRecord } from './store/types.ts';

const SNIPPET_CHARS = 320;

let lastMs = Number.NaN;
let lastIso = '';

/**
 * A memory's three times are often the same instant (never updated, occurred when written):
 * the last one formatted is reused instead of formatting it again.
 */
function iso(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

/** The wire form of a memory; `snippet` cuts long content at a code-point boundary. */
export function presentMemory(memory: MemoryRecord, snippet = false) {
  const points = snippet ? Array.from(memory.content) : null;
  const truncated = points !== null && points.length > SNIPPET_CHARS;
  return {
    id: memory.id,
    content: truncated ? `${points.slice(0, SNIPPET_CHARS).join('')}…` : memory.content,
    ...(truncated ? { content_truncated: true } : {}),
    tags: memory.tags,
    metadata: memory.metadata,
    namespace: memory.namespace,
    key: memory.key,
    pinned: memory.pinned,
    created_at: iso(memory.createdAt),
    updated_at: iso(memory.updatedAt),
    occurred_at: iso(memory.occurredAt),
    expires_at: isoOrNull(memory.expiresAt),
    embedding_status: memory.embeddingStatus,
    superseded_by: memory.supersededBy,
  };
}
