import type { StoredMemory } from './common.ts';
import type { MemoryRecord, WriteInput } from './types.ts';
import type { AsyncWriteStatements, RowValues } from './write-plan.ts';

/**
 * The lookups of one batch of writes (writeMany on Postgres) answered from rows read up
 * front, in one query, instead of one round trip per line: each line of an import asks
 * `byKey` or `twin` once, and over a network (or PGlite's socket) that query cost as much
 * as the insert. Rows the batch writes are added as it goes, so a later line of the same
 * batch meets an earlier one as it would in the store. Only the pairs read up front are
 * answered here; anything else still goes to the store.
 */
export class BatchLookups {
  private readonly keys = new Map<string, StoredMemory>();
  private readonly hashes = new Map<string, StoredMemory[]>();
  private readonly knownKeys = new Set<string>();
  private readonly knownHashes = new Set<string>();

  /** `rows`: every row of the key matching any input's (namespace, key) or (namespace, hash). */
  constructor(inputs: readonly WriteInput[], rows: readonly StoredMemory[]) {
    for (const input of inputs) {
      if (input.key !== null) this.knownKeys.add(pair(input.namespace, input.key));
      else this.knownHashes.add(pair(input.namespace, input.contentHash));
    }
    for (const row of [...rows].sort((a, b) => a.rowId - b.rowId)) this.add(row);
  }

  /** The (namespace, key) and (namespace, content hash) pairs to read up front. */
  static wanted(inputs: readonly WriteInput[]): { keys: [string, string][]; hashes: [string, string][] } {
    const keys: [string, string][] = [];
    const hashes: [string, string][] = [];
    for (const input of inputs) {
      if (input.key !== null) keys.push([input.namespace, input.key]);
      else hashes.push([input.namespace, input.contentHash]);
    }
    return { keys, hashes };
  }

  private add(row: StoredMemory): void {
    const { memory } = row;
    if (memory.key !== null) this.keys.set(pair(memory.namespace, memory.key), row);
    const at = pair(memory.namespace, row.contentHash);
    const list = this.hashes.get(at) ?? [];
    list.push(row);
    list.sort((a, b) => a.rowId - b.rowId);
    this.hashes.set(at, list);
  }

  private drop(rowId: number): void {
    for (const [at, row] of this.keys) if (row.rowId === rowId) this.keys.delete(at);
    for (const [at, list] of this.hashes) {
      const kept = list.filter((row) => row.rowId !== rowId);
      if (kept.length === 0) this.hashes.delete(at);
      else this.hashes.set(at, kept);
    }
  }

  /** The statements with byKey and twin answered here, and every change kept in step. */
  wrap(inner: AsyncWriteStatements): AsyncWriteStatements {
    const written = (contentHash: string) => (memory: MemoryRecord) => {
      this.drop(memory.seq);
      this.add({ rowId: memory.seq, contentHash, memory });
      return memory;
    };
    return {
      purgeExpired: () => inner.purgeExpired(),
      holds: (id) => inner.holds(id),
      byKey: async (namespace, key) =>
        this.knownKeys.has(pair(namespace, key))
          ? this.keys.get(pair(namespace, key))
          : inner.byKey(namespace, key),
      twin: async (namespace, hash) =>
        this.knownHashes.has(pair(namespace, hash))
          ? this.hashes.get(pair(namespace, hash))?.[0]
          : inner.twin(namespace, hash),
      count: () => inner.count(),
      leastRecent: (limit) => inner.leastRecent(limit),
      remove: async (rowIds) => {
        await inner.remove(rowIds);
        for (const rowId of rowIds) this.drop(rowId);
      },
      insert: (id, namespace, key, values: RowValues) =>
        inner.insert(id, namespace, key, values).then(written(values.contentHash)),
      rewrite: (rowId, namespace, values, reembed) =>
        inner.rewrite(rowId, namespace, values, reembed).then(written(values.contentHash)),
      touch: async (rowId, tags, pinned) => {
        const hash = [...this.hashes.values()].flat().find((row) => row.rowId === rowId)?.contentHash;
        const memory = await inner.touch(rowId, tags, pinned);
        return hash === undefined ? memory : written(hash)(memory);
      },
      markSuperseded: (older, newer) => inner.markSuperseded(older, newer),
    };
  }
}

function pair(namespace: string, value: string): string {
  return `${namespace}\u0000${value}`;
}
