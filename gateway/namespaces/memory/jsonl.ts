/**
 * The import and export line format (`npm run memory -- import|export`): one memory per line
 * of JSON, with the fields a writer sets and nothing the store assigns (id, write times,
 * embedding state), so a file moves memories between keys, stores or gateways:
 *
 *   {"content":"…","tags":[],"metadata":{},"namespace":"default","key":null,"pinned":false,
 *    "occurred_at":"2025-03-14T07:30:00.000Z","expires_at":null}
 *
 * Export writes every field, in that order, times in UTC with milliseconds; import takes the
 * same, with every field but content optional (memory_write's defaults), and checks each line
 * as memory_write checks its arguments.
 */
import { z } from 'zod';
import { contentSchema, Instant, Metadata, Namespace, occurredAtProblem, Tags } from './schemas.ts';
import { contentHash } from './store/common.ts';
import type { MemoryRecord, WriteInput } from './store/types.ts';

export function lineSchema(maxChars: number) {
  return z
    .object({
      content: contentSchema(maxChars),
      tags: Tags.optional(),
      metadata: Metadata.optional(),
      namespace: Namespace.optional(),
      key: z.string().min(1).max(128).nullable().optional(),
      pinned: z.boolean().optional(),
      occurred_at: Instant.optional(),
      expires_at: Instant.nullable().optional(),
    })
    .strict();
}

export type LineParser = (text: string, now: number) => { input: WriteInput } | { problem: string };

/**
 * Reads one line into a write, or says what is wrong with it in one sentence (the field
 * first, as memory_write's errors name it). `now` is the import's clock for the two checks
 * that depend on it: an event time too far ahead, and an expiry already past.
 */
export function lineParser(maxChars: number): LineParser {
  const schema = lineSchema(maxChars);
  return (text, now) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { problem: `not JSON (${(error as Error).message})` };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { problem: 'not a JSON object; each line holds one memory, {"content": …}' };
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      return {
        problem: parsed.error.issues
          .map((issue) =>
            issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
          )
          .join('; '),
      };
    const line = parsed.data;
    const occurredAt = line.occurred_at === undefined ? undefined : Date.parse(line.occurred_at);
    const late = occurredAt === undefined ? null : occurredAtProblem(occurredAt, now);
    if (late) return { problem: late };
    const expiresAt = line.expires_at == null ? null : Date.parse(line.expires_at);
    if (expiresAt !== null && expiresAt <= now)
      return { problem: `expires_at: ${line.expires_at} has passed; the memory would be gone at once` };
    return {
      input: {
        content: line.content,
        contentHash: contentHash(line.content),
        tags: [...new Set(line.tags ?? [])],
        metadata: line.metadata ?? {},
        namespace: line.namespace ?? 'default',
        key: line.key ?? null,
        expiresAt,
        pinned: line.pinned ?? false,
        ...(occurredAt === undefined ? {} : { occurredAt }),
        dedupe: 'exact',
      },
    };
  };
}

/** One exported line, without its newline; importing it writes the same memory again. */
export function exportLine(memory: MemoryRecord): string {
  return JSON.stringify({
    content: memory.content,
    tags: memory.tags,
    metadata: memory.metadata,
    namespace: memory.namespace,
    key: memory.key,
    pinned: memory.pinned,
    occurred_at: new Date(memory.occurredAt).toISOString(),
    expires_at: memory.expiresAt === null ? null : new Date(memory.expiresAt).toISOString(),
  });
}
