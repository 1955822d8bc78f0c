import { z } from 'zod';

/**
 * Tool schemas. The origin's six tools keep their names and fields (a superset here), so
 * an origin call validates unchanged. Patterns are ASCII for every JSON-Schema client.
 */
export const MemoryId = z.uuid();
export const Tag = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$/,
    'tags are 1-64 characters: letters, digits and _ . : / - (starting with a letter or digit)',
  );
export const Tags = z.array(Tag).max(16, 'at most 16 tags');
const MetaKey = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'metadata keys are 1-64 characters: letters, digits and _ . -');
const metadataSize = (value: Record<string, unknown>) =>
  Object.keys(value).length <= 32 && Buffer.byteLength(JSON.stringify(value)) <= 8192;
const metadataSizeMessage = 'metadata holds at most 32 keys and 8 KiB';
export const Metadata = z.record(MetaKey, z.string().max(1024)).refine(metadataSize, metadataSizeMessage);
export const MetadataPatch = z
  .record(MetaKey, z.string().max(1024).nullable())
  .refine(metadataSize, metadataSizeMessage);
export const Namespace = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, 'namespace is 1-64 characters: a-z, 0-9 and _ . : -');
export const Instant = z.iso.datetime({ offset: true });

/**
 * How far in the future an `occurred_at` may lie: the writer's clock may run a little ahead
 * of the gateway's. Anything further is a mistake (a wrong year or time zone), and a memory
 * dated in the future would rank as the newest statement of its fact until that day came.
 */
export const OCCURRED_AT_MAX_SKEW_MS = 5 * 60_000;

export function occurredAtProblem(ms: number, now: number): string | null {
  return ms > now + OCCURRED_AT_MAX_SKEW_MS
    ? `occurred_at is more than ${OCCURRED_AT_MAX_SKEW_MS / 60_000} minutes in the future; give when it happened (ISO 8601 with an offset or Z)`
    : null;
}

/** Event time: an ISO 8601 instant with an offset or Z, not in the future beyond the clock skew. */
export const OccurredAt = Instant.superRefine((value, ctx) => {
  const problem = occurredAtProblem(Date.parse(value), Date.now());
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export const TagMode = z.enum(['any', 'all']);
const TtlSeconds = z.number().int().min(60).max(157_680_000);

export function contentSchema(maxChars: number) {
  return z
    .string()
    .trim()
    .min(1, 'content is required')
    .max(maxChars)
    .refine(
      (text) => Buffer.byteLength(text) <= maxChars * 4,
      `content is at most ${maxChars * 4} bytes of UTF-8`,
    );
}

const filterFields = {
  tags: Tags.optional(),
  tag_mode: TagMode.optional(),
  namespace: Namespace.optional(),
  metadata: Metadata.optional(),
  created_after: Instant.optional(),
  created_before: Instant.optional(),
  occurred_after: Instant.optional(),
  occurred_before: Instant.optional(),
};

const searchInput = z
  .object({
    query: z.string().trim().min(1, 'query must hold at least one word').max(1000),
    limit: z
      .number()
      .int('limit is a whole number')
      .min(1, 'limit is 1 to 100 (default 5)')
      .max(100, 'limit is 1 to 100 (default 5)')
      .optional(),
    min_score: z.number().min(0).max(1).optional(),
    include_weak: z.boolean().optional(),
    include_superseded: z.boolean().optional(),
    recency: z
      .object({
        half_life_days: z.number().min(0.01).max(36_500),
        weight: z.number().min(0).max(0.1, 'recency weight is at most 0.1: it only breaks near ties'),
      })
      .strict()
      .optional(),
    ...filterFields,
    updated_after: Instant.optional(),
    mode: z.enum(['hybrid', 'keyword', 'vector']).optional(),
    weights: z
      .object({ vector: z.number().min(0).max(10), keyword: z.number().min(0).max(10) })
      .strict()
      .optional(),
    include_expired: z.boolean().optional(),
  })
  .strict();

function writeInput(content: ReturnType<typeof contentSchema>) {
  return z
    .object({
      content,
      tags: Tags.optional(),
      metadata: Metadata.optional(),
      namespace: Namespace.optional(),
      key: z.string().min(1).max(128).optional(),
      expires_at: Instant.optional(),
      ttl_seconds: TtlSeconds.optional(),
      pinned: z.boolean().optional(),
      occurred_at: OccurredAt.optional(),
      dedupe: z.enum(['exact', 'none']).optional(),
      supersedes: MemoryId.optional(),
    })
    .strict()
    .refine((v) => !(v.expires_at && v.ttl_seconds), {
      message: 'give expires_at or ttl_seconds, not both',
      path: ['ttl_seconds'],
    });
}

function updateInput(content: ReturnType<typeof contentSchema>) {
  return z
    .object({
      id: MemoryId,
      content: content.optional(),
      tags: Tags.optional(),
      metadata: MetadataPatch.optional(),
      namespace: Namespace.optional(),
      expires_at: Instant.nullable().optional(),
      ttl_seconds: TtlSeconds.optional(),
      pinned: z.boolean().optional(),
      occurred_at: OccurredAt.optional(),
    })
    .strict()
    .refine((v) => Object.keys(v).length > 1, { message: 'give at least one field to change' })
    .refine((v) => !(v.expires_at !== undefined && v.ttl_seconds !== undefined), {
      message: 'give expires_at or ttl_seconds, not both',
      path: ['ttl_seconds'],
    });
}

const listInput = z
  .object({
    ...filterFields,
    pinned: z.boolean().optional(),
    limit: z.number().int().min(0).max(100).optional(),
    cursor: z.string().max(512).optional(),
    order: z.enum(['newest', 'oldest']).optional(),
    include_expired: z.boolean().optional(),
  })
  .strict();

const deleteManyInput = z
  .object({
    ids: z.array(MemoryId).min(1).max(100).optional(),
    filter: z
      .object({ ...filterFields, all: z.literal(true).optional() })
      .strict()
      .refine((f) => Object.values(f).some((v) => v !== undefined && !(Array.isArray(v) && v.length === 0)), {
        message: 'filter must name at least one condition, or all: true to delete every memory',
      })
      .optional(),
    dry_run: z.boolean().default(true),
    include_pinned: z.boolean().default(false),
  })
  .strict()
  .refine((v) => (v.ids === undefined) !== (v.filter === undefined), {
    message: 'give either ids or filter',
  });

const exportInput = z
  .object({
    namespace: Namespace.optional(),
    cursor: z.string().max(512).optional(),
    limit: z.number().int().min(1).max(200).optional(),
  })
  .strict();

/** Only content depends on the configured size limit; the rest are shared. */
export function inputSchemas(maxChars: number) {
  const content = contentSchema(maxChars);
  return {
    search: searchInput,
    write: writeInput(content),
    get: z.object({ id: MemoryId }).strict(),
    update: updateInput(content),
    delete: z.object({ id: MemoryId }).strict(),
    list: listInput,
    deleteMany: deleteManyInput,
    export: exportInput,
    stats: z.object({}).strict(),
  };
}

export const memoryOutput = z.object({
  id: z.string(),
  content: z.string(),
  content_truncated: z.boolean().optional(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.string()),
  namespace: z.string(),
  key: z.string().nullable(),
  pinned: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  occurred_at: z.string(),
  expires_at: z.string().nullable(),
  embedding_status: z.enum(['pending', 'ready', 'failed']),
  superseded_by: z.string().nullable(),
});

export const hitOutput = memoryOutput.extend({
  relevance: z.number(),
  weak: z.boolean(),
  source: z.enum(['vector', 'keyword', 'both']),
  score: z.number().nullable(),
  semantic: z.number().nullable(),
  keyword: z.number(),
  keyword_score: z.number().nullable(),
  /** Present when the rerank stage reordered this hit: the reranker's own score, not calibrated. */
  rerank_score: z.number().optional(),
});

export const outputSchemas = {
  search: z.object({
    query: z.string(),
    mode: z.enum(['hybrid', 'keyword', 'vector']),
    hits: z.array(hitOutput),
    total_memories: z.number(),
    best_relevance: z.number().nullable(),
    weak: z.boolean(),
    note: z.string().optional(),
    degraded: z.string().optional(),
  }),
  write: memoryOutput.extend({
    status: z.enum(['created', 'updated', 'unchanged']),
    evicted_ids: z.array(z.string()),
    decision: z
      .object({
        action: z.enum(['add', 'update', 'delete', 'skip']),
        target: z.string().optional(),
        fallback: z.string().optional(),
      })
      .optional(),
  }),
  memory: memoryOutput,
  delete: z.object({ id: z.string(), deleted: z.literal(true) }),
  list: z.object({ memories: z.array(memoryOutput), next_cursor: z.string().nullable() }),
  deleteMany: z.object({
    dry_run: z.boolean(),
    matched: z.number(),
    deleted: z.number(),
    ids: z.array(z.string()),
  }),
  export: z.object({
    memories: z.array(memoryOutput),
    next_cursor: z.string().nullable(),
    exported_at: z.string(),
  }),
  stats: z.object({
    count: z.number(),
    by_namespace: z.record(z.string(), z.number()),
    pinned: z.number(),
    pending_embeddings: z.number(),
    failed_embeddings: z.number(),
    oldest_at: z.string().nullable(),
    newest_at: z.string().nullable(),
    max_per_key: z.number(),
    embedding: z.object({
      provider: z.enum(['local', 'minilm', 'openai', 'none']),
      model: z.string().nullable(),
      dimensions: z.number().nullable(),
      min_score_default: z.number().nullable(),
      fusion: z.enum(['convex', 'rrf']),
      vector_weight: z.number(),
      weak_below: z.number(),
      available: z.boolean(),
      problem: z.string().nullable(),
    }),
    reranker: z
      .object({
        kind: z.string(),
        active: z.boolean(),
        api: z.enum(['cohere', 'tei']).nullable(),
        model: z.string().nullable(),
        top_n: z.number().nullable(),
        problem: z.string().nullable(),
      })
      .optional(),
    store: z.enum(['sqlite', 'postgres']),
  }),
};
