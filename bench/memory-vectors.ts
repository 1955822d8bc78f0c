/**
 * Real embeddings for the memory benchmark, computed once by the product's own embedder
 * (the piscina pool running the local USE-lite model) and kept under
 * .cache/memory-bench/. USE-lite costs about 8 ms of CPU per text, so 100k memories take
 * a quarter of an hour the first time and nothing afterwards. Each cached row carries a
 * hash of its text, so a changed text list recomputes from the first row that differs.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Embedder } from '../gateway/namespaces/memory/embeddings/embedder.ts';
import { LOCAL_MODEL } from '../gateway/namespaces/memory/embeddings/types.ts';
import { benchRoot } from './child.ts';

export const CACHE_DIR = join(benchRoot, '.cache', 'memory-bench');
const HASH_BYTES = 8;
const BATCH = 64;

function textHash(text: string): Buffer {
  return createHash('sha256').update(text).digest().subarray(0, HASH_BYTES);
}

export interface VectorSet {
  dims: number;
  /** Row-major, one unit vector per text. */
  data: Float32Array;
  row(i: number): Float32Array;
}

function vectorSet(dims: number, data: Float32Array): VectorSet {
  return { dims, data, row: (i) => data.subarray(i * dims, (i + 1) * dims) };
}

/** Rows of the cache that still match `texts`, from the start. */
async function validPrefix(name: string, texts: string[], dims: number): Promise<number> {
  const manifest = join(CACHE_DIR, `${name}.json`);
  if (!existsSync(manifest)) return 0;
  const info = JSON.parse(await readFile(manifest, 'utf8')) as { model: string; dims: number };
  if (info.model !== LOCAL_MODEL.model || info.dims !== dims) return 0;
  const hashes = await readFile(join(CACHE_DIR, `${name}.hash`)).catch(() => Buffer.alloc(0));
  const vectors = await readFile(join(CACHE_DIR, `${name}.f32`)).catch(() => Buffer.alloc(0));
  const stored = Math.min(hashes.length / HASH_BYTES, vectors.length / (dims * 4));
  let valid = 0;
  while (valid < stored && valid < texts.length) {
    const at = valid * HASH_BYTES;
    if (!hashes.subarray(at, at + HASH_BYTES).equals(textHash(texts[valid]!))) break;
    valid++;
  }
  return valid;
}

/**
 * Vectors for `texts`, from the cache where it has them and from the local model for the
 * rest (appended to the cache as they are made, so an interrupted run resumes).
 */
export async function cachedVectors(
  name: string,
  texts: string[],
  log: (line: string) => void,
  threads = 2,
): Promise<VectorSet> {
  const dims = LOCAL_MODEL.dimensions;
  await mkdir(CACHE_DIR, { recursive: true });
  const valid = await validPrefix(name, texts, dims);
  const hashFile = join(CACHE_DIR, `${name}.hash`);
  const vectorFile = join(CACHE_DIR, `${name}.f32`);
  if (valid < texts.length) {
    await writeFile(
      join(CACHE_DIR, `${name}.json`),
      JSON.stringify({ model: LOCAL_MODEL.model, dims, note: 'USE-lite vectors of bench texts' }),
    );
    if (!existsSync(hashFile)) await writeFile(hashFile, '');
    if (!existsSync(vectorFile)) await writeFile(vectorFile, '');
    await truncate(hashFile, valid * HASH_BYTES);
    await truncate(vectorFile, valid * dims * 4);
    const missing = texts.length - valid;
    log(`embedding ${missing} ${name} texts with the local model (cached under .cache/memory-bench)`);
    const embedder = new Embedder({ provider: 'local' }, { threads, queryTimeoutMs: 60_000 });
    const hashes = await open(hashFile, 'a');
    const vectors = await open(vectorFile, 'a');
    const started = Date.now();
    try {
      let next = valid;
      let lastLog = Date.now();
      while (next < texts.length) {
        // One batch per pool thread at a time; batches are appended in order.
        const starts: number[] = [];
        for (let t = 0; t < threads && next < texts.length; t++, next += BATCH) starts.push(next);
        const results = await Promise.all(
          starts.map((start) => embedder.embed(texts.slice(start, Math.min(start + BATCH, texts.length)))),
        );
        for (const [b, batch] of results.entries()) {
          const start = starts[b]!;
          const block = new Float32Array(batch.length * dims);
          batch.forEach((v, i) => {
            block.set(v, i * dims);
          });
          await vectors.write(Buffer.from(block.buffer));
          await hashes.write(Buffer.concat(batch.map((_, i) => textHash(texts[start + i]!))));
        }
        if (Date.now() - lastLog > 30_000) {
          lastLog = Date.now();
          const done = next - valid;
          const rate = done / ((Date.now() - started) / 1000);
          log(
            `  ${name}: ${Math.min(next, texts.length)}/${texts.length} (${Math.round(rate)} texts/s, about ${Math.round((texts.length - next) / rate)} s left)`,
          );
        }
      }
    } finally {
      await hashes.close();
      await vectors.close();
      await embedder.close();
    }
  }
  const bytes = await readFile(vectorFile);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  return vectorSet(dims, all.slice(0, texts.length * dims));
}
