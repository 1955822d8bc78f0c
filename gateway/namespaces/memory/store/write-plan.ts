import { randomUUID } from 'node:crypto';
import { mergeMetadata, type StoredMemory, sameJson, sortedMetadata, unionTags } from './common.ts';
import {
  MemoryLimitError,
  type MemoryRecord,
  SupersedesNotFoundError,
  type UpdatePatch,
  type WriteInput,
  type WriteResult,
} from './types.ts';

/**
 * The memory write rule, said once for both stores: what a write does (insert, upsert an
 * existing key, fold into an identical memory, evict for the cap, supersede an older one)
 * is decided here; a store only answers the questions the plan asks and runs the changes
 * it orders, each in its own SQL, inside the one transaction that makes the write atomic.
 *
 * The plan is a generator because the two transactions differ in kind: better-sqlite3's
 * is synchronous (a write runs inside the write group's transaction, no await allowed),
 * node-postgres's is asynchronous. runWritePlan and runWritePlanAsync step the same plan
 * through either, so the rule cannot drift apart between the engines.
 */

/** The columns a write sets on a row it inserts or rewrites (times are the write's `now`). */
export interface RowValues {
  content: string;
  contentHash: string;
  tags: string[];
  /** Keys sorted, so equal maps are stored alike and compare equal. */
  metadata: Record<string, string>;
  pinned: boolean;
  expiresAt: number | null;
  /** Event time; null stores the write's `now`. */
  occurredAt: number | null;
}

/**
 * What a plan asks of a store; each store binds one of these to the writing api key and the
 * write's clock, so every statement is scoped by the key.
 */
export interface WriteStatements {
  /** Deletes the key's rows whose expiry has passed. */
  purgeExpired(): void;
  /** Whether the key holds a live (unexpired) memory with this id. */
  holds(id: string): boolean;
  /** The memory of the key stored under this namespace and upsert key. */
  byKey(namespace: string, key: string): StoredMemory | undefined;
  /** The oldest memory of the namespace with this content hash. */
  twin(namespace: string, contentHash: string): StoredMemory | undefined;
  /** How many memories the key holds. */
  count(): number;
  /** Up to `limit` unpinned memories of the key, least recently written first. */
  leastRecent(limit: number): { rowId: number; id: string }[];
  remove(rowIds: number[]): void;
  insert(id: string, namespace: string, key: string | null, values: RowValues): MemoryRecord;
  /** Replaces a row's values; `reembed` marks its embedding pending (the content changed). */
  rewrite(rowId: number, namespace: string, values: RowValues, reembed: boolean): MemoryRecord;
  /** Sets an identical memory's merged tags and pin, and marks it written now. */
  touch(rowId: number, tags: string[], pinned: boolean): MemoryRecord;
  markSuperseded(olderId: string, newerId: string): void;
}

type Name = keyof WriteStatements;
type Ask = { [K in Name]: { name: K; args: Parameters<WriteStatements[K]> } }[Name];
export type WritePlan = Generator<Ask, WriteResult, unknown>;

/** The same statements answering through promises (a Postgres transaction). */
export type AsyncWriteStatements = {
  [K in Name]: (...args: Parameters<WriteStatements[K]>) => Promise<ReturnType<WriteStatements[K]>>;
};

function* ask<K extends Name>(
  name: K,
  ...args: Parameters<WriteStatements[K]>
): Generator<Ask, ReturnType<WriteStatements[K]>, unknown> {
  return (yield { name, args } as Ask) as ReturnType<WriteStatements[K]>;
}

/**
 * What the writes of one transaction share (writeMany): the key's expired rows are purged
 * once, and its count is read once and then kept here, instead of a purge and a count per
 * memory (on Postgres the count scans the key, so a 10,000-line import paid for it 10,000 times).
 */
export interface BatchState {
  purged: boolean;
  count: number | null;
}

export function newBatchState(): BatchState {
  return { purged: false, count: null };
}

/**
 * A `supersedes` naming no live memory of the key writes nothing (the caller's transaction
 * rolls back). With `evict` false (the import), a write that needs room is refused with
 * MemoryLimitError before it changes anything, so nothing imported earlier is evicted.
 */
export function* planWrite(
  input: WriteInput,
  maxPerKey: number,
  options: { evict?: boolean; batch?: BatchState } = {},
): WritePlan {
  const older = input.supersedes;
  if (older !== undefined && !(yield* ask('holds', older))) throw new SupersedesNotFoundError(older);
  const result = yield* placeMemory(
    input,
    maxPerKey,
    options.evict ?? true,
    options.batch ?? newBatchState(),
  );
  // A write that lands on the older memory itself (an upsert or a dedup onto it) supersedes nothing.
  if (older !== undefined && older !== result.memory.id)
    yield* ask('markSuperseded', older, result.memory.id);
  return result;
}

function* placeMemory(input: WriteInput, maxPerKey: number, evict: boolean, batch: BatchState): WritePlan {
  // Expired rows are gone for every purpose: they neither block a key nor count to the cap.
  if (!batch.purged) {
    yield* ask('purgeExpired');
    batch.purged = true;
  }
  const values: RowValues = {
    content: input.content,
    contentHash: input.contentHash,
    tags: input.tags,
    metadata: sortedMetadata(input.metadata),
    pinned: input.pinned,
    expiresAt: input.expiresAt,
    occurredAt: input.occurredAt ?? null,
  };
  if (input.key !== null) {
    const existing = yield* ask('byKey', input.namespace, input.key);
    if (existing) return yield* upsert(existing, values);
  } else if (input.dedupe === 'exact') {
    const twin = yield* ask('twin', input.namespace, input.contentHash);
    if (twin) return yield* foldIntoTwin(twin, input);
  }
  const evictedIds = yield* makeRoom(maxPerKey, evict, batch);
  const memory = yield* ask('insert', randomUUID(), input.namespace, input.key, values);
  batch.count! += 1;
  return { memory, status: 'created', evictedIds };
}

/**
 * A second write of an upsert key replaces the memory in place; one that changes nothing is
 * not written. Without an event time it keeps the stored one while the content stays (so a
 * repeated import is unchanged) and takes the write's time when the content changes.
 */
function* upsert(existing: StoredMemory, given: RowValues): WritePlan {
  const { memory } = existing;
  const reembed = existing.contentHash !== given.contentHash;
  const values = { ...given, occurredAt: given.occurredAt ?? (reembed ? null : memory.occurredAt) };
  const same =
    memory.content === values.content &&
    sameJson(memory.tags, values.tags) &&
    sameJson(sortedMetadata(memory.metadata), values.metadata) &&
    memory.pinned === values.pinned &&
    memory.expiresAt === values.expiresAt &&
    memory.occurredAt === values.occurredAt;
  if (same) return { memory, status: 'unchanged', evictedIds: [] };
  return {
    memory: yield* ask('rewrite', existing.rowId, memory.namespace, values, reembed),
    status: 'updated',
    evictedIds: [],
  };
}

/** The same text again keeps the first memory: the new tags join it and a pinned write pins it. */
function* foldIntoTwin(twin: StoredMemory, input: WriteInput): WritePlan {
  const merged = unionTags(twin.memory.tags, input.tags);
  const pin = input.pinned && !twin.memory.pinned;
  if (merged.length === twin.memory.tags.length && !pin)
    return { memory: twin.memory, status: 'unchanged', evictedIds: [] };
  const memory = yield* ask('touch', twin.rowId, merged, input.pinned || twin.memory.pinned);
  return { memory, status: 'unchanged', evictedIds: [] };
}

/** Evicts the least recently written unpinned memories so one more fits under the cap. */
function* makeRoom(maxPerKey: number, evict: boolean, batch: BatchState): Generator<Ask, string[], unknown> {
  batch.count ??= yield* ask('count');
  const excess = batch.count + 1 - maxPerKey;
  if (excess <= 0) return [];
  if (!evict) throw new MemoryLimitError(maxPerKey);
  const victims = yield* ask('leastRecent', excess);
  // Pinned memories are never evicted: with too few unpinned ones the write is refused.
  if (victims.length < excess) throw new MemoryLimitError(maxPerKey);
  yield* ask(
    'remove',
    victims.map((victim) => victim.rowId),
  );
  batch.count -= victims.length;
  return victims.map((victim) => victim.id);
}

/**
 * What memory_update makes of a memory: the fields given replace the stored ones, metadata
 * is merge-patched (a null value removes that key), an expiry of null clears it, and only
 * new content re-embeds. New content without an event time takes the update's time (it is
 * a statement made now), as an upsert does. The caller rewrites the row with the result.
 */
export function planUpdate(
  current: StoredMemory,
  patch: UpdatePatch,
): { namespace: string; values: RowValues; reembed: boolean } {
  const { memory } = current;
  const contentHash = patch.content?.hash ?? current.contentHash;
  return {
    namespace: patch.namespace ?? memory.namespace,
    values: {
      content: patch.content?.text ?? memory.content,
      contentHash,
      tags: patch.tags ?? memory.tags,
      metadata: mergeMetadata(memory.metadata, patch.metadata ?? {}),
      pinned: patch.pinned ?? memory.pinned,
      expiresAt: patch.expiresAt === undefined ? memory.expiresAt : patch.expiresAt,
      occurredAt: patch.occurredAt ?? (contentHash !== current.contentHash ? null : memory.occurredAt),
    },
    reembed: contentHash !== current.contentHash,
  };
}

/** Runs a plan against synchronous statements (SQLite), inside the caller's transaction. */
export function runWritePlan(plan: WritePlan, statements: WriteStatements): WriteResult {
  let step = plan.next();
  while (!step.done) {
    const statement = statements[step.value.name] as (...args: unknown[]) => unknown;
    step = plan.next(statement.apply(statements, step.value.args));
  }
  return step.value;
}

/** Runs a plan against statements that answer through promises (Postgres), inside the caller's transaction. */
export async function runWritePlanAsync(
  plan: WritePlan,
  statements: AsyncWriteStatements,
): Promise<WriteResult> {
  let step = plan.next();
  while (!step.done) {
    const statement = statements[step.value.name] as (...args: unknown[]) => Promise<unknown>;
    step = plan.next(await statement.apply(statements, step.value.args));
  }
  return step.value;
}

/** Nearest memories the automatic update rule looks at per new one: a likely update is among the closest few. */
export const SUPERSEDE_NEIGHBOURS = 16;

/**
 * The automatic update rule (see ranking.ts, docs/decisions/0086-knowledge-updates-add-only.md and
 * docs/decisions/0701-memory-event-time.md): each
 * given memory, once embedded, supersedes the current memories of its key and namespace
 * whose vectors lie within `minSimilarity` cosine of its own, among its SUPERSEDE_NEIGHBOURS
 * nearest, that come before it in event order (occurred_at, then write order); when such a
 * memory comes after it instead (an import about the past), the latest one supersedes it.
 * Pinned and upsert-keyed memories are never superseded this way (their writers manage them).
 * Returns the rows to run it for, in write order; none when the threshold is 1 (the rule
 * switched off). A row already superseded when its turn comes is skipped.
 */
export function autoSupersedeOrder(rowIds: readonly number[], minSimilarity: number): number[] {
  if (minSimilarity >= 1) return [];
  return [...rowIds].sort((a, b) => a - b);
}
