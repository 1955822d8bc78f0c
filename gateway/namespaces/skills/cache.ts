/**
 * A small in-memory cache with a time-to-live and a size budget, oldest evicted first. Keys are
 * commit, tree and blob SHAs (content-addressed, so a hit can never be stale) or, for ref →
 * commit lookups, a ref name with a short TTL.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number; weight: number }>();
  private weight = 0;

  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number = () => 1,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return;
    this.delete(key);
    this.entries.set(key, { value, expires: this.now() + ttlMs, weight });
    this.weight += weight;
    for (const oldest of this.entries.keys()) {
      if (this.weight <= this.maxWeight) break;
      this.delete(oldest);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
