/**
 * Per-key counters in shared memory, the same bytes in every listener thread of a process.
 * One limiter per thread would let N threads admit N times a key's budget; a MessagePort to
 * an owner thread is exact but costs tens of microseconds a request. Atomics on a
 * SharedArrayBuffer are exact and cost nanoseconds (see docs/decisions/0150-gcra-in-shared-memory.md).
 *
 * A slot per key id: the id's 64-bit hash is claimed by compare-and-swap with linear
 * probing, so threads agree on the slot without talking. Each slot holds a GCRA
 * "theoretical arrival time" (one number, so one CAS updates the whole bucket) and a count
 * of the key's long polls in flight.
 */
import { createHash } from 'node:crypto';
import { isMainThread, workerData } from 'node:worker_threads';
import type { RatePolicy } from '../core/key-limits.ts';

/** Keys a process can track; a slot costs 20 bytes, so 65,536 keys take 1.3 MB. */
const SLOTS = 65_536;
const BYTES = SLOTS * 8 * 2 + SLOTS * 4;

export type Verdict = { ok: true } | { ok: false; waitMicros: number };

/** Requests taken from a bucket at once; none (granted 0) comes with the wait until one. */
export interface Grant {
  granted: number;
  waitMicros: number;
}

/** Shared by every thread of one process: the clock each thread reads must agree. */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

export class SharedLimitTable {
  private readonly ids: BigInt64Array;
  private readonly tat: BigInt64Array;
  private readonly polls: Int32Array;
  /** Per-thread memo of id → slot: hashing and probing happen once per key and thread. */
  private readonly slotOf = new Map<string, number>();

  constructor(readonly memory: SharedArrayBuffer) {
    this.ids = new BigInt64Array(memory, 0, SLOTS);
    this.tat = new BigInt64Array(memory, SLOTS * 8, SLOTS);
    this.polls = new Int32Array(memory, SLOTS * 16, SLOTS);
  }

  /** The slot for a key id, claimed on first use; -1 when the table is full. */
  slot(keyId: string): number {
    const known = this.slotOf.get(keyId);
    if (known !== undefined) return known;
    const digest = createHash('sha256').update(keyId).digest();
    // Zero marks a free slot, so a hash of zero is nudged to one.
    const hash = digest.readBigInt64LE(0) || 1n;
    let index = digest.readUInt32LE(8) % SLOTS;
    for (let probes = 0; probes < SLOTS; probes += 1) {
      const seen = Atomics.compareExchange(this.ids, index, 0n, hash);
      if (seen === 0n || seen === hash) {
        this.slotOf.set(keyId, index);
        return index;
      }
      index = (index + 1) % SLOTS;
    }
    return -1;
  }

  /**
   * Takes up to `want` requests at once from the key's bucket (GCRA: a token bucket of
   * `burst` tokens refilled every `intervalMicros`): all of them if the bucket holds them,
   * else what it holds, else none and the wait until one. Exact under any interleaving of
   * threads: the new arrival time is published only if no other thread moved it meanwhile.
   */
  lease(slot: number, policy: RatePolicy, want: number, now = nowMicros()): Grant {
    const interval = policy.intervalMicros;
    const tau = policy.burst * interval;
    for (;;) {
      const stored = Atomics.load(this.tat, slot);
      // More debt than a full bucket is only possible after the key's limit was raised: a
      // backlog counted at the old, slower rate would hold the key for minutes, so the
      // raised limit starts with a full bucket instead.
      const debt = Number(stored);
      const base = debt > now + tau ? now : Math.max(debt, now);
      const available = Math.floor((now + tau - base) / interval);
      if (available < 1) return { granted: 0, waitMicros: base + interval - tau - now };
      const granted = available < want ? available : want;
      const next = base + granted * interval;
      if (Atomics.compareExchange(this.tat, slot, stored, BigInt(Math.ceil(next))) === stored) {
        return { granted, waitMicros: 0 };
      }
    }
  }

  /** One request's verdict, taken straight from the bucket (no lease). */
  take(slot: number, policy: RatePolicy, now = nowMicros()): Verdict {
    const grant = this.lease(slot, policy, 1, now);
    return grant.granted > 0 ? { ok: true } : { ok: false, waitMicros: grant.waitMicros };
  }

  /**
   * Puts `count` leased, unspent requests back: the bucket holds them again, but never more
   * than full (a bucket that refilled meanwhile is simply full).
   */
  giveBack(slot: number, policy: RatePolicy, count: number, now = nowMicros()): void {
    for (;;) {
      const stored = Atomics.load(this.tat, slot);
      const debt = Number(stored);
      if (debt <= now) return;
      const back = debt - count * policy.intervalMicros;
      const value = back <= now ? 0n : BigInt(Math.ceil(back));
      if (Atomics.compareExchange(this.tat, slot, stored, value) === stored) return;
    }
  }

  /** Counts a poll in if fewer than `max` are in flight; false when the cap is reached. */
  enterPoll(slot: number, max: number): boolean {
    for (;;) {
      const current = Atomics.load(this.polls, slot);
      if (current >= max) return false;
      if (Atomics.compareExchange(this.polls, slot, current, current + 1) === current) return true;
    }
  }

  leavePoll(slot: number): void {
    Atomics.sub(this.polls, slot, 1);
  }
}

let processTable: SharedLimitTable | undefined;

/**
 * The process's table. The main thread allocates it; listener threads receive the same
 * buffer in workerData (listener-threads.ts passes it), so all of them count together.
 */
export function processLimitTable(): SharedLimitTable {
  if (processTable) return processTable;
  const inherited = isMainThread ? undefined : (workerData as { limitMemory?: unknown } | null)?.limitMemory;
  const memory = inherited instanceof SharedArrayBuffer ? inherited : new SharedArrayBuffer(BYTES);
  processTable = new SharedLimitTable(memory);
  return processTable;
}
