/**
 * What an agent reads about each memory tool: name, title, description, annotations and the
 * shape of its answer, one entry per tool. tools.ts says what each tool does; the input
 * schemas depend on the configured content size, so they come from inputSchemas there.
 */
import { outputSchemas } from './schemas.ts';

/** The three kinds of memory tool, as MCP annotations; none reaches outside the gateway. */
const READS = { readOnlyHint: true, openWorldHint: false };
const CHANGES = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const DELETES = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Keyed as inputSchemas is, so an entry and its input schema share one key. */
export const MEMORY_TOOLS = {
  search: {
    name: 'memory_search',
    title: 'Search memories',
    description:
      'Find your memories relevant to a query (hybrid: semantic + keyword). Each hit has a relevance from 0 to 1 (how closely its meaning and its words match the query), says how it matched (source: vector, keyword or both, with the raw cosine `score` and `keyword_score`), and is marked weak when the answer may not be in it. `weak: true` on the result means even the best candidate is weak: say you do not know rather than guess. Candidates too weak to show are left out unless include_weak is true. Memories replaced by a newer one (memory_write supersedes, or detected updates) are hidden unless include_superseded is true. Optional: min_score (a cosine floor), mode (hybrid, keyword, vector), weights, recency (a small, bounded boost for memories whose occurred_at is recent), filters (tags with tag_mode any|all, namespace, metadata, created_after/before, updated_after, occurred_after/before). If the embedder is down the search answers keyword-only and says so in `degraded`. With a reranker configured (memory_capabilities says which), the top hits are reordered by it and carry its `rerank_score`; relevance and weak stay as the first stage judged them, and if the reranker fails the first-stage order is kept and `degraded` says why. Contents are snippets; call memory_get for the full text.',
    annotations: READS,
    output: outputSchemas.search,
  },
  write: {
    name: 'memory_write',
    title: 'Write a memory',
    description:
      'Store a memory for later. Exact duplicates (same text in the same namespace) are not stored twice: the existing memory comes back with status "unchanged" and the tags merged. Give `key` to upsert: a second write with the same key (in the same namespace) replaces that memory. expires_at or ttl_seconds make it temporary; pinned memories are never evicted. When the per-key cap is reached the least recently written unpinned memories are evicted and their ids returned in evicted_ids. Give `supersedes: <id>` when this memory replaces an older one (a changed fact): the older one is then hidden from search unless include_superseded is true. Give `occurred_at` (ISO 8601 with offset or Z; default now, at most 5 minutes ahead) when what it states happened earlier: newest first, recency and supersession go by it. A memory very close in meaning to one of the same namespace that occurred earlier supersedes it on its own.',
    annotations: CHANGES,
    output: outputSchemas.write,
  },
  get: {
    name: 'memory_get',
    title: 'Read one memory',
    description: 'The full memory by id.',
    annotations: READS,
    output: outputSchemas.memory,
  },
  update: {
    name: 'memory_update',
    title: 'Change a memory',
    description:
      'Change a memory: content (re-embedded), tags (replaced), metadata (merge-patch: a null value removes that key), namespace, expires_at (null clears) or ttl_seconds, pinned, occurred_at (when it happened; new content without it is dated now). Give at least one.',
    annotations: CHANGES,
    output: outputSchemas.memory,
  },
  delete: {
    name: 'memory_delete',
    title: 'Delete a memory',
    description: 'Delete one memory by id.',
    annotations: DELETES,
    output: outputSchemas.delete,
  },
  list: {
    name: 'memory_list',
    title: 'List memories',
    description:
      'Browse memories without a query: newest first (pinned first) or oldest first by occurred_at (ties in write order), filtered by tags (any|all), namespace, metadata, created_after/before, occurred_after/before and pinned. Pages with next_cursor. Contents are snippets.',
    annotations: READS,
    output: outputSchemas.list,
  },
  deleteMany: {
    name: 'memory_delete_many',
    title: 'Delete many memories',
    description:
      'Delete memories by ids (up to 100) or by a filter (namespace, tags, tag_mode, metadata, created_after/before, occurred_after/before; `all: true` for everything). dry_run defaults to true: it reports what would go. Pinned memories are kept unless include_pinned is true.',
    annotations: DELETES,
    output: outputSchemas.deleteMany,
  },
  export: {
    name: 'memory_export',
    title: 'Export memories',
    description:
      'Every memory with its full content, oldest first, in pages (limit up to 200, and about 1 MiB per page). Pass next_cursor to continue until it is null.',
    annotations: READS,
    output: outputSchemas.export,
  },
  stats: {
    name: 'memory_stats',
    title: 'Memory statistics',
    description:
      'How many memories you hold (per namespace, pinned), how many still wait for their embedding, the cap, and the embedding model and default score floor in use.',
    annotations: READS,
    output: outputSchemas.stats,
  },
};
