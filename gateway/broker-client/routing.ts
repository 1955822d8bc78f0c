/**
 * Which worker serves a routing key (a consumer group): rendezvous (highest random weight)
 * hashing over the configured list. Every gateway process computes the same answer from
 * the same list, and changing the list moves only the keys of the workers added or removed.
 */

/** 32-bit FNV-1a over UTF-8 bytes, then a murmur3-style finalizer to spread close inputs. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Index into `workers` (their canonical address strings) of the worker that owns `key`. */
export function pickWorker(workers: readonly string[], key: string): number {
  if (workers.length === 0) throw new Error('no broker workers are configured');
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < workers.length; i += 1) {
    const score = hash32(`${workers[i]}\u0000${key}`);
    // Ties (vanishingly rare) go to the address that sorts first, independent of list order.
    if (score > bestScore || (score === bestScore && workers[i]! < workers[best]!)) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}
