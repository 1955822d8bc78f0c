/**
 * The WebAssembly Hamming kernel against a plain JavaScript popcount, and the nearest-row
 * selection against a sort, on seeded random bits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HammingArena, nearestRows } from '../../../gateway/namespaces/memory/store/hamming.ts';

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function randomBits(random: () => number, bytes: number): Uint8Array {
  return Uint8Array.from({ length: bytes }, () => Math.floor(random() * 256));
}

function popcountDistance(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]! ^ b[i]!;
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

for (const bytes of [4, 64, 100]) {
  test(`distances of ${bytes}-byte vectors match a JavaScript popcount, across memory growth`, () => {
    const random = seeded(bytes);
    const arena = new HammingArena(bytes);
    // Enough rows that the memory grows past its first 64 KiB page several times.
    const rows = Array.from({ length: 3_000 }, () => randomBits(random, bytes));
    for (const [i, bits] of rows.entries()) arena.put(i, bits);
    assert.equal(arena.rows, rows.length);
    const query = randomBits(random, bytes);
    const distances = arena.distances(query);
    assert.equal(distances.length, rows.length);
    for (const [i, bits] of rows.entries())
      assert.equal(distances[i], popcountDistance(bits, query), `row ${i}`);
    // Overwriting a row in place changes only that row's distance.
    arena.put(7, query);
    const again = arena.distances(query);
    assert.equal(again[7], 0);
    assert.equal(again[8], popcountDistance(rows[8]!, query));
  });
}

test('an empty arena scans to no distances', () => {
  const arena = new HammingArena(64);
  assert.equal(arena.distances(new Uint8Array(64)).length, 0);
});

test('nearestRows returns the k smallest, ties to the lower row, skipping dead rows', () => {
  const random = seeded(99);
  const distances = Uint16Array.from({ length: 5_000 }, () => Math.floor(random() * 40));
  const skip = (row: number) => row % 7 === 0;
  const dead = Uint8Array.from(distances, (_, row) => (skip(row) ? 1 : 0));
  for (const k of [1, 10, 120, 4_285, 4_286, 4_999, 5_000, 6_000]) {
    const ordered = [...distances.keys()].sort((a, b) => distances[a]! - distances[b]! || a - b);
    const expected = ordered.filter((row) => !skip(row)).slice(0, k);
    assert.deepEqual(nearestRows(distances, 64, k, dead), expected, `k = ${k}`);
    assert.deepEqual(nearestRows(distances, 64, k, null), ordered.slice(0, k), `k = ${k}, none dead`);
  }
  assert.deepEqual(nearestRows(distances, 64, 0, dead), []);
});
