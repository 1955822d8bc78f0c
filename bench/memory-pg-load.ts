/**
 * Bulk loading of the Postgres memory store for the scale rows: whole keys of memories
 * written by SQL into the store's own tables (the migrations' schema, the same columns the
 * store writes and its generated tsvector), then one HNSW build over every vector. A
 * million memories written one transaction each, as memory_write does, would put the write
 * path's minutes before every search figure; the rows are the same, only how they arrive
 * differs.
 *
 * Each batch is one statement: the memories and their vectors in one CTE, vectors sent in
 * pgvector's binary format (an array of `vector` in a binary parameter), so neither side
 * prints or parses 512 floats as text.
 */
import { randomUUID } from 'node:crypto';
import { contentHash } from '../gateway/namespaces/memory/store/common.ts';
import { createPgPool } from '../gateway/store/index.ts';
import type { CorpusVectors, Ledger } from './memory-fixtures.ts';

const BATCH = 1_000;

/** Where key `k`'s row `r` takes its vector: every key its own, so no two rows of the table share one. */
export const vectorRow = (perKey: number, key: number, row: number) => key * perKey + row;
export const keyName = (key: number) => `bench-pg-key-${key}`;

/**
 * A one-dimensional `vector[]` in PostgreSQL's binary array format, each element in
 * pgvector's binary `vector` format (int16 dimensions, int16 zero, float4s, big-endian).
 */
function binaryVectorArray(elementOid: number, vectors: Float32Array[]): Buffer {
  const dims = vectors[0]!.length;
  const element = 4 + dims * 4;
  const out = Buffer.allocUnsafe(20 + vectors.length * (4 + element));
  out.writeInt32BE(1, 0); // dimensions of the array
  out.writeInt32BE(0, 4); // no nulls
  out.writeUInt32BE(elementOid, 8);
  out.writeInt32BE(vectors.length, 12);
  out.writeInt32BE(1, 16); // lower bound
  let at = 20;
  for (const v of vectors) {
    out.writeInt32BE(element, at);
    out.writeInt16BE(dims, at + 4);
    out.writeInt16BE(0, at + 6);
    at += 8;
    for (let i = 0; i < dims; i++, at += 4) out.writeFloatBE(v[i]!, at);
  }
  return out;
}

export interface LoadFigures {
  /** Memories in the table once loaded. */
  rows: number;
  keys: number;
  loadSeconds: number;
  rowsPerSecond: number;
  /** The HNSW build over every vector in the table; null when it did not finish within its budget. */
  indexSeconds: number | null;
  indexBudgetSeconds: number;
}

/** The statement of one batch: memories and their vectors together. */
const INSERT_BATCH = `
  WITH t AS (SELECT * FROM unnest($3::uuid[], $4::text[], $5::text[], $6::vector[]) AS t(p, c, h, v)),
  m AS (
    INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status,
                          created_at, updated_at, occurred_at)
    SELECT p, $1, 'default', c, h, 'ready', $2, $2, $2 FROM t RETURNING id, public_id)
  INSERT INTO memory_vectors (memory_id, api_key_id, embedding)
  SELECT m.id, $1, t.v FROM m JOIN t ON t.p = m.public_id`;

/**
 * Loads keys [fromKey, toKey), `perKey` memories each (texts[0..perKey), deduplicated per
 * key as memory_write does), without the HNSW index, which is built after.
 */
async function loadKeys(
  url: string,
  plan: { perKey: number; fromKey: number; toKey: number },
  texts: string[],
  vectors: CorpusVectors,
  ledger: Ledger,
  log: (line: string) => void,
): Promise<void> {
  const pool = createPgPool(url, { max: 1, queryTimeoutMs: 600_000 });
  try {
    const [{ oid }] = (await pool.query("SELECT 'vector'::regtype::oid AS oid")).rows as [{ oid: number }];
    // One statement at a time on one connection; the next batch is encoded while the last runs.
    let inFlight: Promise<unknown> = Promise.resolve();
    const now = Date.now();
    for (let key = plan.fromKey; key < plan.toKey; key++) {
      const seen = new Set<string>();
      for (let from = 0; from < plan.perKey; from += BATCH) {
        const rows: { id: string; text: string; hash: string; row: number }[] = [];
        for (let row = from; row < Math.min(plan.perKey, from + BATCH); row++) {
          const text = texts[row]!;
          const hash = contentHash(text);
          if (seen.has(hash)) continue;
          seen.add(hash);
          rows.push({ id: randomUUID(), text, hash, row });
        }
        const binary = binaryVectorArray(
          oid,
          rows.map((r) => vectors.get(vectorRow(plan.perKey, key, r.row))),
        );
        const params = [
          keyName(key),
          now,
          rows.map((r) => r.id),
          rows.map((r) => r.text),
          rows.map((r) => r.hash),
          binary,
        ];
        await inFlight;
        inFlight = pool.query(INSERT_BATCH, params);
        for (const r of rows) ledger.add(r.id, keyName(key), vectorRow(plan.perKey, key, r.row));
      }
      await inFlight;
      log(`memory (postgres): ${keyName(key)} loaded (${plan.perKey} memories)`);
    }
  } finally {
    await pool.end();
  }
}

/**
 * Adds keys up to `toKey` and rebuilds the HNSW index over the whole table, timing both. The
 * build gets `indexBudgetSeconds` (a statement timeout); past it the index is left absent
 * and the figures say so.
 */
export async function growTable(
  url: string,
  plan: { perKey: number; fromKey: number; toKey: number; indexBudgetSeconds: number },
  texts: string[],
  vectors: CorpusVectors,
  ledger: Ledger,
  log: (line: string) => void,
): Promise<LoadFigures> {
  const rows = plan.perKey * plan.toKey;
  const admin = createPgPool(url, { max: 1, queryTimeoutMs: (plan.indexBudgetSeconds + 60) * 1000 });
  try {
    await admin.query('DROP INDEX IF EXISTS memory_vectors_hnsw');
    log(
      `memory (postgres): loading keys ${plan.fromKey}..${plan.toKey - 1} (${plan.perKey} each, by batches)`,
    );
    const loadStarted = Date.now();
    await loadKeys(url, plan, texts, vectors, ledger, log);
    const loadSeconds = (Date.now() - loadStarted) / 1000;
    await admin.query('VACUUM ANALYZE memories');
    await admin.query('VACUUM ANALYZE memory_vectors');
    log(`memory (postgres): building the HNSW index over ${rows} vectors`);
    // The graph of a million 512-d vectors (about 2.5 GB) is built in memory only when it fits.
    await admin.query(`SET maintenance_work_mem = '${rows > 200_000 ? '4GB' : '1GB'}'`);
    await admin.query(`SET statement_timeout = ${plan.indexBudgetSeconds * 1000}`);
    const indexStarted = Date.now();
    let indexSeconds: number | null = null;
    try {
      await admin.query(
        'CREATE INDEX memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops)',
      );
      indexSeconds = Math.round((Date.now() - indexStarted) / 100) / 10;
      log(`memory (postgres): HNSW index over ${rows} vectors built in ${indexSeconds} s`);
    } catch (error) {
      if ((error as { code?: string }).code !== '57014') throw error;
      log(
        `memory (postgres): HNSW build over ${rows} vectors passed its ${plan.indexBudgetSeconds} s budget`,
      );
    }
    await admin.query('RESET statement_timeout');
    return {
      rows,
      keys: plan.toKey,
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      rowsPerSecond: Math.round((plan.perKey * (plan.toKey - plan.fromKey)) / loadSeconds),
      indexSeconds,
      indexBudgetSeconds: plan.indexBudgetSeconds,
    };
  } finally {
    await admin.end();
  }
}
