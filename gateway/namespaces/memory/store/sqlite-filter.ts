import type { MemoryFilter } from './types.ts';

/** A WHERE fragment over `m` (memories) with its named parameters. */
export interface SqlFragment {
  sql: string;
  params: Record<string, unknown>;
}

/** Every condition a list, search or bulk delete can carry; the key condition is always first. */
export function sqliteFilter(apiKeyId: string, filter: MemoryFilter, now: number): SqlFragment {
  const clauses = ['m.api_key_id = @key'];
  const params: Record<string, unknown> = { key: apiKeyId };
  if (!filter.includeExpired) {
    clauses.push('(m.expires_at IS NULL OR m.expires_at > @now)');
    params.now = now;
  }
  if (filter.namespace !== undefined) {
    clauses.push('m.namespace = @ns');
    params.ns = filter.namespace;
  }
  if (filter.tags && filter.tags.length > 0) {
    const names = filter.tags.map((tag, i) => {
      params[`tag${i}`] = tag;
      return `@tag${i}`;
    });
    if (filter.tagMode === 'all') {
      clauses.push(
        `(SELECT COUNT(DISTINCT t.value) FROM json_each(m.tags) t WHERE t.value IN (${names.join(', ')})) = @tagCount`,
      );
      params.tagCount = new Set(filter.tags).size;
    } else {
      clauses.push(`EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN (${names.join(', ')}))`);
    }
  }
  Object.entries(filter.metadata ?? {}).forEach(([name, value], i) => {
    clauses.push(`json_extract(m.metadata, @mp${i}) = @mv${i}`);
    params[`mp${i}`] = `$."${name}"`;
    params[`mv${i}`] = value;
  });
  if (filter.createdAfter !== undefined) {
    clauses.push('m.created_at > @createdAfter');
    params.createdAfter = filter.createdAfter;
  }
  if (filter.createdBefore !== undefined) {
    clauses.push('m.created_at < @createdBefore');
    params.createdBefore = filter.createdBefore;
  }
  if (filter.updatedAfter !== undefined) {
    clauses.push('m.updated_at > @updatedAfter');
    params.updatedAfter = filter.updatedAfter;
  }
  if (filter.occurredAfter !== undefined) {
    clauses.push('m.occurred_at > @occurredAfter');
    params.occurredAfter = filter.occurredAfter;
  }
  if (filter.occurredBefore !== undefined) {
    clauses.push('m.occurred_at < @occurredBefore');
    params.occurredBefore = filter.occurredBefore;
  }
  if (filter.currentOnly) clauses.push('m.superseded_by IS NULL');
  if (filter.pinned !== undefined) {
    clauses.push('m.pinned = @pinned');
    params.pinned = filter.pinned ? 1 : 0;
  }
  return { sql: clauses.join(' AND '), params };
}

/** True when the filter narrows more than the key and expiry (the vector arm then scans exactly). */
export function narrowsBeyondKey(filter: MemoryFilter): boolean {
  return (
    filter.namespace !== undefined ||
    (filter.tags?.length ?? 0) > 0 ||
    Object.keys(filter.metadata ?? {}).length > 0 ||
    filter.createdAfter !== undefined ||
    filter.createdBefore !== undefined ||
    filter.updatedAfter !== undefined ||
    filter.occurredAfter !== undefined ||
    filter.occurredBefore !== undefined ||
    filter.pinned !== undefined
  );
}
