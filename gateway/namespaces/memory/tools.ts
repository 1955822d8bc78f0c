import type { z } from 'zod';
import { type ToolContext, type ToolDefinition, ToolError } from '../../mcp/tool.ts';
import { isoOrNull, presentMemory } from './present.ts';
import { inputSchemas } from './schemas.ts';
import type { MemoryService } from './service.ts';
import { contentHash } from './store/common.ts';
import type { MemoryFilter } from './store/types.ts';
import { MEMORY_TOOLS } from './tool-catalog.ts';

const NOT_FOUND = 'memory not found';

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
  occurred_after?: string | undefined;
  occurred_before?: string | undefined;
}): MemoryFilter {
  const filter: MemoryFilter = {};
  if (args.tags?.length) filter.tags = [...new Set(args.tags)];
  if (args.tag_mode) filter.tagMode = args.tag_mode;
  if (args.namespace !== undefined) filter.namespace = args.namespace;
  if (args.metadata && Object.keys(args.metadata).length > 0) filter.metadata = args.metadata;
  if (args.created_after) filter.createdAfter = ms(args.created_after)!;
  if (args.created_before) filter.createdBefore = ms(args.created_before)!;
  if (args.occurred_after) filter.occurredAfter = ms(args.occurred_after)!;
  if (args.occurred_before) filter.occurredBefore = ms(args.occurred_before)!;
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

type ToolKey = keyof typeof MEMORY_TOOLS;
type Input<K extends ToolKey> = z.output<ReturnType<typeof inputSchemas>[K]>;
type Output<K extends ToolKey> = z.output<(typeof MEMORY_TOOLS)[K]['output']>;

/** What every memory tool is built from. */
interface Kit {
  service: MemoryService;
  /**
   * The tool of that catalog entry. It acts for the calling key at one reading of the clock;
   * store failures become tool errors.
   */
  tool<K extends ToolKey>(
    entry: K,
    work: (args: Input<K>, apiKeyId: string, now: number, context: ToolContext) => Promise<Output<K>>,
  ): ToolDefinition;
}

export function createMemoryTools(service: MemoryService): ToolDefinition[] {
  const schemas = inputSchemas(service.settings.MEMORY_MAX_CONTENT_CHARS);
  const kit: Kit = {
    service,
    // The entry's key picks the input schema, so the handler's types follow from the catalog.
    tool: (entry, work) => ({
      ...MEMORY_TOOLS[entry],
      input: schemas[entry],
      // The context, not its signal: an engine makes a request's abort signal (an
      // AbortController) on its first read, so only search, which hands it to the reranker,
      // reads it. Read on every call, it was about 7% of a memory_get's CPU time.
      handler: (args, ctx) => service.guard(() => work(args as never, ctx.caller.apiKeyId, Date.now(), ctx)),
    }),
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

function searchTool({ service, tool }: Kit): ToolDefinition {
  return tool('search', async (args, key, _now, context) => {
    const result = await service.search(key, {
      query: args.query,
      signal: context.signal,
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
        ...(hit.rerankScore === undefined ? {} : { rerank_score: hit.rerankScore }),
      })),
      total_memories: result.total,
      best_relevance: result.ranked.best,
      weak: result.ranked.weak,
      ...(result.note ? { note: result.note } : {}),
      ...(result.degraded ? { degraded: result.degraded } : {}),
    };
  });
}

function writeTool({ service, tool }: Kit): ToolDefinition {
  return tool('write', async (args, key, now) => {
    const result = await service.write(key, {
      content: args.content,
      contentHash: contentHash(args.content),
      tags: [...new Set(args.tags ?? [])],
      metadata: args.metadata ?? {},
      namespace: args.namespace ?? 'default',
      key: args.key ?? null,
      expiresAt: expiryOf(args, now) ?? null,
      pinned: args.pinned ?? false,
      ...(args.occurred_at ? { occurredAt: ms(args.occurred_at)! } : {}),
      dedupe: args.dedupe ?? 'exact',
      ...(args.supersedes ? { supersedes: args.supersedes } : {}),
    });
    return {
      ...presentMemory(result.memory),
      status: result.status,
      evicted_ids: result.evictedIds,
      ...(result.decision ? { decision: result.decision } : {}),
    };
  });
}

function getTool({ service, tool }: Kit): ToolDefinition {
  return tool('get', async (args, key, now) => {
    const memory = await service.store.get(key, args.id, now);
    if (!memory) throw new ToolError('NOT_FOUND', NOT_FOUND);
    return presentMemory(memory);
  });
}

function updateTool({ service, tool }: Kit): ToolDefinition {
  return tool('update', async (args, key, now) => {
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
      ...(args.occurred_at === undefined ? {} : { occurredAt: ms(args.occurred_at)! }),
    });
    if (!memory) throw new ToolError('NOT_FOUND', NOT_FOUND);
    return presentMemory(memory);
  });
}

function deleteTool({ service, tool }: Kit): ToolDefinition {
  return tool('delete', async (args, key, now) => {
    if (!(await service.store.delete(key, args.id, now))) {
      throw new ToolError('NOT_FOUND', NOT_FOUND);
    }
    return { id: args.id, deleted: true as const };
  });
}

function listTool({ service, tool }: Kit): ToolDefinition {
  return tool('list', async (args, key, now) => {
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
  });
}

function deleteManyTool({ service, tool }: Kit): ToolDefinition {
  return tool('deleteMany', async (args, key, now) => {
    const target = args.ids ? { ids: args.ids } : { filter: filterOf(args.filter ?? {}) };
    const result = await service.store.deleteMany(
      key,
      target,
      { dryRun: args.dry_run, includePinned: args.include_pinned },
      now,
    );
    return { dry_run: args.dry_run, ...result };
  });
}

function exportTool({ service, tool }: Kit): ToolDefinition {
  return tool('export', async (args, key, now) => {
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
  });
}

function statsTool({ service, tool }: Kit): ToolDefinition {
  return tool('stats', async (_args, key, now) => {
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
      ...(service.reranker ? { reranker: service.reranker.info() } : {}),
      store: service.store.engine,
    };
  });
}
