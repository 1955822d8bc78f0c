import { defineTool, type ToolContext, type ToolDefinition, ToolError } from '../../mcp/tool.ts';
import { isoOrNull, presentMemory } from './present.ts';
import { inputSchemas, outputSchemas } from './schemas.ts';
import type { MemoryService } from './service.ts';
import { contentHash } from './store/common.ts';
import type { MemoryFilter } from './store/types.ts';

const NOT_FOUND = 'memory not found';

/** The three kinds of memory tool, as MCP annotations; none reaches outside the gateway. */
const READS = { readOnlyHint: true, openWorldHint: false };
const CHANGES = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const DELETES = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

function ms(iso: string | undefined): number | undefined {
  return iso === undefined ? undefined : Date.parse(iso);
}

function filterOf(args: {
  tags?: string[] | undefined;
  tag_mode?: 'any' | 'all' | undefined;
  namespace?: string | undefined;
  metadata?: Record<string, string> | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}): MemoryFilter {
  const filter: MemoryFilter = {};
  if (args.tags?.length) filter.tags = [...new Set(args.tags)];
  if (args.tag_mode) filter.tagMode = args.tag_mode;
  if (args.namespace !== undefined) filter.namespace = args.namespace;
  if (args.metadata && Object.keys(args.metadata).length > 0) filter.metadata = args.metadata;
  if (args.created_after) filter.createdAfter = ms(args.created_after)!;
  if (args.created_before) filter.createdBefore = ms(args.created_before)!;
  return filter;
}

function expiryOf(
  args: { expires_at?: string | null; ttl_seconds?: number },
  now: number,
): number | null | undefined {
  if (args.ttl_seconds !== undefined) return now + args.ttl_seconds * 1000;
  if (args.expires_at === null) return null;
  if (args.expires_at === undefined) return undefined;
  const at = Date.parse(args.expires_at);
  if (at <= now) throw new ToolError('INVALID_EXPIRY', 'expires_at must be in the future');
  return at;
}

/** What every memory tool is built from. */
interface Kit {
  service: MemoryService;
  schemas: ReturnType<typeof inputSchemas>;
  /** Every memory tool acts for the calling key at one reading of the clock; store failures become tool errors. */
  asCaller<A, T>(
    work: (args: A, apiKeyId: string, now: number) => Promise<T>,
  ): (args: A, ctx: ToolContext) => Promise<T>;
}

export function createMemoryTools(service: MemoryService): ToolDefinition[] {
  const kit: Kit = {
    service,
    schemas: inputSchemas(service.settings.MEMORY_MAX_CONTENT_CHARS),
    asCaller: (work) => (args, ctx) => service.guard(() => work(args, ctx.caller.apiKeyId, Date.now())),
  };
  return [
    searchTool,
    writeTool,
    getTool,
    updateTool,
    deleteTool,
    listTool,
    deleteManyTool,
    exportTool,
    statsTool,
  ].map((tool) => tool(kit));
}

function searchTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_search',
    title: 'Search memories',
    description:
      'Find your memories relevant to a query (hybrid: semantic + keyword). Each hit has a relevance from 0 to 1 (how closely its meaning and its words match the query), says how it matched (source: vector, keyword or both, with the raw cosine `score` and `keyword_score`), and is marked weak when the answer may not be in it. `weak: true` on the result means even the best candidate is weak: say you do not know rather than guess. Candidates too weak to show are left out unless include_weak is true. Memories replaced by a newer one (memory_write supersedes, or detected updates) are hidden unless include_superseded is true. Optional: min_score (a cosine floor), mode (hybrid, keyword, vector), weights, recency (a small, bounded boost for newer memories), filters (tags with tag_mode any|all, namespace, metadata, created_after/before, updated_after). If the embedder is down the search answers keyword-only and says so in `degraded`. Contents are snippets; call memory_get for the full text.',
    input: schemas.search,
    output: outputSchemas.search,
    annotations: READS,
    handler: asCaller(async (args, key) => {
      const result = await service.search(key, {
        query: args.query,
        limit: args.limit ?? 5,
        includeWeak: args.include_weak ?? false,
        ...(args.min_score === undefined ? {} : { minScore: args.min_score }),
        ...(args.mode ? { mode: args.mode } : {}),
        ...(args.weights ? { weights: args.weights } : {}),
        ...(args.recency
          ? { recency: { halfLifeDays: args.recency.half_life_days, weight: args.recency.weight } }
          : {}),
        filter: {
          ...filterOf(args),
          ...(args.updated_after ? { updatedAfter: ms(args.updated_after)! } : {}),
          ...(args.include_expired ? { includeExpired: true } : {}),
          ...(args.include_superseded ? {} : { currentOnly: true }),
        },
      });
      return {
        query: args.query,
        mode: result.mode,
        hits: result.ranked.hits.map((hit) => ({
          ...presentMemory(hit.memory, true),
          relevance: hit.relevance,
          weak: hit.weak,
          source: hit.source,
          score: hit.cosine,
          semantic: hit.semantic,
          keyword: hit.keyword,
          keyword_score: hit.keywordScore,
        })),
        total_memories: result.total,
        best_relevance: result.ranked.best,
        weak: result.ranked.weak,
        ...(result.note ? { note: result.note } : {}),
        ...(result.degraded ? { degraded: result.degraded } : {}),
      };
    }),
  });
}

function writeTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_write',
    title: 'Write a memory',
    description:
      'Store a memory for later. Exact duplicates (same text in the same namespace) are not stored twice: the existing memory comes back with status "unchanged" and the tags merged. Give `key` to upsert: a second write with the same key (in the same namespace) replaces that memory. expires_at or ttl_seconds make it temporary; pinned memories are never evicted. When the per-key cap is reached the least recently written unpinned memories are evicted and their ids returned in evicted_ids. Give `supersedes: <id>` when this memory replaces an older one (a changed fact): the older one is then hidden from search unless include_superseded is true. A newer memory very close in meaning to an older one of the same namespace supersedes it on its own.',
    input: schemas.write,
    output: outputSchemas.write,
    annotations: CHANGES,
    handler: asCaller(async (args, key, now) => {
      const result = await service.write(key, {
        content: args.content,
        contentHash: contentHash(args.content),
        tags: [...new Set(args.tags ?? [])],
        metadata: args.metadata ?? {},
        namespace: args.namespace ?? 'default',
        key: args.key ?? null,
        expiresAt: expiryOf(args, now) ?? null,
        pinned: args.pinned ?? false,
        dedupe: args.dedupe ?? 'exact',
        ...(args.supersedes ? { supersedes: args.supersedes } : {}),
      });
      return {
        ...presentMemory(result.memory),
        status: result.status,
        evicted_ids: result.evictedIds,
        ...(result.decision ? { decision: result.decision } : {}),
      };
    }),
  });
}

function getTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_get',
    title: 'Read one memory',
    description: 'The full memory by id.',
    input: schemas.get,
    output: outputSchemas.memory,
    annotations: READS,
    handler: asCaller(async (args, key, now) => {
      const memory = await service.store.get(key, args.id, now);
      if (!memory) throw new ToolError('NOT_FOUND', NOT_FOUND);
      return presentMemory(memory);
    }),
  });
}

function updateTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_update',
    title: 'Change a memory',
    description:
      'Change a memory: content (re-embedded), tags (replaced), metadata (merge-patch: a null value removes that key), namespace, expires_at (null clears) or ttl_seconds, pinned. Give at least one.',
    input: schemas.update,
    output: outputSchemas.memory,
    annotations: CHANGES,
    handler: asCaller(async (args, key, now) => {
      const expiresAt = expiryOf(args, now);
      const memory = await service.update(key, args.id, {
        ...(args.content === undefined
          ? {}
          : { content: { text: args.content, hash: contentHash(args.content) } }),
        ...(args.tags === undefined ? {} : { tags: [...new Set(args.tags)] }),
        ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
        ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(args.pinned === undefined ? {} : { pinned: args.pinned }),
      });
      if (!memory) throw new ToolError('NOT_FOUND', NOT_FOUND);
      return presentMemory(memory);
    }),
  });
}

function deleteTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_delete',
    title: 'Delete a memory',
    description: 'Delete one memory by id.',
    input: schemas.delete,
    output: outputSchemas.delete,
    annotations: DELETES,
    handler: asCaller(async (args, key, now) => {
      if (!(await service.store.delete(key, args.id, now))) {
        throw new ToolError('NOT_FOUND', NOT_FOUND);
      }
      return { id: args.id, deleted: true as const };
    }),
  });
}

function listTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_list',
    title: 'List memories',
    description:
      'Browse memories without a query: newest first (pinned first) or oldest first, filtered by tags (any|all), namespace, metadata, created_after/before and pinned. Pages with next_cursor. Contents are snippets.',
    input: schemas.list,
    output: outputSchemas.list,
    annotations: READS,
    handler: asCaller(async (args, key, now) => {
      const page = await service.store.list(
        key,
        {
          ...filterOf(args),
          ...(args.pinned === undefined ? {} : { pinned: args.pinned }),
          ...(args.include_expired ? { includeExpired: true } : {}),
        },
        {
          limit: args.limit || 20,
          order: args.order ?? 'newest',
          ...(args.cursor ? { cursor: args.cursor } : {}),
        },
        now,
      );
      return { memories: page.memories.map((m) => presentMemory(m, true)), next_cursor: page.nextCursor };
    }),
  });
}

function deleteManyTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_delete_many',
    title: 'Delete many memories',
    description:
      'Delete memories by ids (up to 100) or by a filter (namespace, tags, tag_mode, metadata, created_after/before; `all: true` for everything). dry_run defaults to true: it reports what would go. Pinned memories are kept unless include_pinned is true.',
    input: schemas.deleteMany,
    output: outputSchemas.deleteMany,
    annotations: DELETES,
    handler: asCaller(async (args, key, now) => {
      const target = args.ids ? { ids: args.ids } : { filter: filterOf(args.filter ?? {}) };
      const result = await service.store.deleteMany(
        key,
        target,
        { dryRun: args.dry_run, includePinned: args.include_pinned },
        now,
      );
      return { dry_run: args.dry_run, ...result };
    }),
  });
}

function exportTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_export',
    title: 'Export memories',
    description:
      'Every memory with its full content, oldest first, in pages (limit up to 200, and about 1 MiB per page). Pass next_cursor to continue until it is null.',
    input: schemas.export,
    output: outputSchemas.export,
    annotations: READS,
    handler: asCaller(async (args, key, now) => {
      const page = await service.store.export(
        key,
        {
          ...(args.namespace ? { namespace: args.namespace } : {}),
          ...(args.cursor ? { cursor: args.cursor } : {}),
          limit: args.limit ?? 100,
          maxBytes: 900_000,
        },
        now,
      );
      return {
        memories: page.memories.map((m) => presentMemory(m)),
        next_cursor: page.nextCursor,
        exported_at: new Date().toISOString(),
      };
    }),
  });
}

function statsTool({ service, schemas, asCaller }: Kit): ToolDefinition {
  return defineTool({
    name: 'memory_stats',
    title: 'Memory statistics',
    description:
      'How many memories you hold (per namespace, pinned), how many still wait for their embedding, the cap, and the embedding model and default score floor in use.',
    input: schemas.stats,
    output: outputSchemas.stats,
    annotations: READS,
    handler: asCaller(async (_args, key, now) => {
      const stats = await service.store.stats(key, now);
      return {
        count: stats.count,
        by_namespace: stats.byNamespace,
        pinned: stats.pinned,
        pending_embeddings: stats.pendingEmbeddings,
        failed_embeddings: stats.failedEmbeddings,
        oldest_at: isoOrNull(stats.oldestAt),
        newest_at: isoOrNull(stats.newestAt),
        max_per_key: service.settings.MEMORY_MAX_PER_KEY,
        embedding: service.embeddingInfo(),
        store: service.store.engine,
      };
    }),
  });
}
