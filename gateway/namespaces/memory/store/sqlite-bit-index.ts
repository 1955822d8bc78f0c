import type { SqliteDatabase } from '../../../store/index.ts';
import { HammingArena, nearestRows } from './hamming.ts';
import type { Statements } from './sqlite-rows.ts';

/**
 * Deleted vectors a key's cached copy may still hold. Up to this many, a search asks for
 * that many extra candidates and drops the ones gone from the file, so the survivors are
 * still exactly the key's nearest; past it the key is reloaded.
 */
const LAZY_DELETES = 256;

/** One key's sign bits as cached: arena row → memory id, and back. */
class KeyBits {
  arena: HammingArena | null = null;
  ids: number[] = [];
  readonly rowOf = new Map<number, number>();
  dead = new Uint8Array(64);
  readonly free: number[] = [];
  live = 0;
  /** Highest `memories_bits.seq` applied. */
  seq = 0;
  /** The key's vector count in the file at the last sync. */
  committed = 0;

  /** Arena plus bookkeeping; 180 bytes a row brings it to the 252 bytes a row measured at 100k. */
  get bytes(): number {
    return (this.arena?.bytes ?? 0) + this.ids.length * 180;
  }

  /** False when `bits` has another width than the rows held (a re-embedded store): reload. */
  put(memoryId: number, bits: Uint8Array): boolean {
    this.arena ??= new HammingArena(bits.length);
    if (Math.ceil(bits.length / 8) * 8 !== this.arena.bytesPerRow) return false;
    let row = this.rowOf.get(memoryId);
    if (row === undefined) {
      row = this.free.pop() ?? this.arena.rows;
      if (row >= this.dead.length) {
        const grown = new Uint8Array(this.dead.length * 2);
        grown.set(this.dead);
        this.dead = grown;
      }
      this.rowOf.set(memoryId, row);
      this.ids[row] = memoryId;
      this.dead[row] = 0;
      this.live++;
    }
    this.arena.put(row, bits);
    return true;
  }

  kill(memoryId: number): void {
    const row = this.rowOf.get(memoryId);
    if (row === undefined) return;
    this.rowOf.delete(memoryId);
    this.dead[row] = 1;
    this.free.push(row);
    this.live--;
  }
}

/**
 * Every key's sign-bit vectors, copied from `memories_bits` into memory and kept current
 * by sequence number: each search reads the key's vector count and the rows written since
 * its last look (an index seek, usually empty) in one read transaction, so it sees what any
 * thread or process has committed. Deletions show up as the count falling below what is
 * held. Keys past the byte budget are dropped least recently searched first.
 */
export class SqliteBitIndex {
  private readonly keys = new Map<string, KeyBits>();
  /** Bytes of every key held, kept as keys come and go (searches need not sum them). */
  private held = 0;
  private readonly syncKey: (apiKeyId: string, held: KeyBits | undefined) => KeyBits;

  constructor(
    db: SqliteDatabase,
    private readonly st: Statements,
    private readonly budgetBytes: number,
  ) {
    this.syncKey = db.transaction((apiKeyId: string, held: KeyBits | undefined) => {
      const counted = this.st('SELECT n FROM memory_bit_counts WHERE api_key_id = ?').get(apiKeyId) as
        | { n: number }
        | undefined;
      const committed = counted?.n ?? 0;
      let bits = held ?? new KeyBits();
      let fits = this.apply(bits, apiKeyId);
      const stale = bits.live - committed;
      if (!fits || stale < 0 || stale > LAZY_DELETES) {
        bits = new KeyBits();
        fits = this.apply(bits, apiKeyId);
      }
      // After a full load what is held is what the file holds, whatever the count says.
      bits.committed = held === bits ? committed : bits.live;
      return bits;
    });
  }

  /** Applies the key's rows written after `bits.seq`; false if their width does not fit. */
  private apply(bits: KeyBits, apiKeyId: string): boolean {
    const rows = this.st(
      'SELECT seq, memory_id, bits FROM memories_bits WHERE api_key_id = ? AND seq > ? ORDER BY seq',
    )
      .raw(true)
      .all(apiKeyId, bits.seq) as [number, number, Buffer][];
    for (const [seq, memoryId, blob] of rows) {
      if (!bits.put(memoryId, blob)) return false;
      bits.seq = seq;
    }
    return true;
  }

  /**
   * Memory ids of the key's `count` vectors nearest to `query` by Hamming distance (ties to
   * the earlier row), exact over what the file held when the search began.
   */
  candidates(apiKeyId: string, query: Uint8Array, count: number): number[] {
    const held = this.keys.get(apiKeyId);
    if (held) {
      // Out and back in: a Map iterates in insertion order, so the first key is the stalest.
      this.keys.delete(apiKeyId);
      this.held -= held.bytes;
    }
    const bits = this.syncKey(apiKeyId, held);
    this.keys.set(apiKeyId, bits);
    this.held += bits.bytes;
    this.trim(apiKeyId);
    if (!bits.arena || bits.live === 0) return [];
    const extra = Math.max(0, bits.live - bits.committed);
    const distances = bits.arena.distances(query);
    const rows = nearestRows(
      distances,
      bits.arena.bytesPerRow * 8,
      count + extra,
      // Dead rows are exactly the free ones; most keys have none, and skip no check.
      bits.free.length > 0 ? bits.dead : null,
    );
    let ids = rows.map((row) => bits.ids[row]!);
    if (extra > 0) {
      const present = new Set(
        // The id list leads (CROSS JOIN): the key's index would walk all its rows.
        this.st(
          'SELECT b.memory_id FROM json_each(?) j CROSS JOIN memories_bits b ON b.memory_id = j.value WHERE b.api_key_id = ?',
        )
          .pluck(true)
          .all(JSON.stringify(ids), apiKeyId) as number[],
      );
      for (const id of ids) if (!present.has(id)) bits.kill(id);
      ids = ids.filter((id) => present.has(id));
    }
    return ids.slice(0, count);
  }

  /** Forget every cached key (after the vector tables were emptied for a re-embed). */
  clear(): void {
    this.keys.clear();
    this.held = 0;
  }

  private trim(keep: string): void {
    for (const [apiKeyId, bits] of this.keys) {
      if (this.held <= this.budgetBytes) break;
      if (apiKeyId === keep) continue;
      this.keys.delete(apiKeyId);
      this.held -= bits.bytes;
    }
  }
}
