import type { SqliteDatabase, SqliteMigration } from '../../../store/index.ts';
import { KEY_TAGGED_FTS_SQL, STEMMED_FTS_SQL, WRITER_MERGES_FTS_SQL } from './sqlite-fts.ts';

/**
 * Memory rows with an FTS5 index kept in step by triggers. The vector table is not here:
 * its width depends on the embedding model, so it is created when a model is adopted.
 */
export const SQLITE_MIGRATIONS: SqliteMigration[] = [
  {
    version: 1,
    name: 'memories with full-text index',
    up: `
      CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        public_id TEXT NOT NULL UNIQUE,
        api_key_id TEXT NOT NULL,
        namespace TEXT NOT NULL,
        key TEXT,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        pinned INTEGER NOT NULL DEFAULT 0,
        expires_at INTEGER,
        embedding_status TEXT NOT NULL DEFAULT 'pending',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX memories_upsert_key ON memories (api_key_id, namespace, key) WHERE key IS NOT NULL;
      CREATE INDEX memories_hash ON memories (api_key_id, namespace, content_hash);
      CREATE INDEX memories_key_created ON memories (api_key_id, pinned, created_at, id);
      CREATE INDEX memories_key_updated ON memories (api_key_id, pinned, updated_at, id);
      CREATE INDEX memories_pending ON memories (id) WHERE embedding_status = 'pending';
      CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
      CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, content='memories', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
      END;
      CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
      END;
      CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
      END;
      CREATE TABLE memory_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    `,
  },
  { version: 2, name: 'per-key counts; bit-quantized vectors with a float re-rank', up: migrateToV2 },
  {
    // The key is indexed beside the content so the keyword arm matches within one key's
    // rows; without it every search ranked the matching rows of all keys, then dropped them.
    // The key-and-expiry index lets each write's purge of the key's expired rows skip
    // the rest of the key (it scanned every row of the key before).
    version: 3,
    name: 'full-text index carries the api key; expiry index per key',
    up: `
      CREATE INDEX memories_key_expiry ON memories (api_key_id, expires_at) WHERE expires_at IS NOT NULL;
      DROP TRIGGER memories_fts_insert;
      DROP TRIGGER memories_fts_delete;
      DROP TRIGGER memories_fts_update;
      DROP TABLE memories_fts;
      CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, api_key_id, content='memories', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
      );
      INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
      CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content, api_key_id) VALUES (new.id, new.content, new.api_key_id);
      END;
      CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, api_key_id) VALUES ('delete', old.id, old.content, old.api_key_id);
      END;
      CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, api_key_id) VALUES ('delete', old.id, old.content, old.api_key_id);
        INSERT INTO memories_fts (rowid, content, api_key_id) VALUES (new.id, new.content, new.api_key_id);
      END;
    `,
  },
  { version: 4, name: 'keyword index tagged by api key', up: KEY_TAGGED_FTS_SQL },
  { version: 5, name: 'sign bits in a plain table, searched in memory', up: migrateToV5 },
  { version: 6, name: 'keyword index stemmed before the key tag; superseded memories', up: STEMMED_FTS_SQL },
  { version: 7, name: 'keyword index merged after each write group', up: WRITER_MERGES_FTS_SQL },
  {
    // Event time: what a memory states happened then, which may be long before it was
    // written (an import, a backfill). Rows written before it existed get their write time,
    // which is what they were ranked and listed by until now. The index serves the list's
    // newest-first order and the occurred_after/before filters within a key.
    version: 8,
    name: 'event time (occurred_at)',
    up: `
      ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
      UPDATE memories SET occurred_at = created_at;
      CREATE INDEX memories_key_occurred ON memories (api_key_id, pinned, occurred_at, id);
    `,
  },
];

/**
 * A memory's vectors go with it, and with its content once that changes (the new text is
 * embedded afresh); `bitsTable` is where the layout keeps the sign bits.
 */
function vectorCleanupTriggers(bitsTable: string): string {
  return `
    CREATE TRIGGER IF NOT EXISTS memories_vec_delete AFTER DELETE ON memories BEGIN
      DELETE FROM ${bitsTable} WHERE memory_id = old.id;
      DELETE FROM memories_vec_float WHERE memory_id = old.id;
    END;
    CREATE TRIGGER IF NOT EXISTS memories_vec_stale AFTER UPDATE OF content ON memories
      WHEN old.content_hash <> new.content_hash BEGIN
      DELETE FROM ${bitsTable} WHERE memory_id = old.id;
      DELETE FROM memories_vec_float WHERE memory_id = old.id;
    END;
  `;
}

/**
 * Vectors live twice, in plain tables: sign bits per key (`memories_bits`, 64 bytes at
 * 512-d; searched as an in-memory copy, see sqlite-bit-index.ts) and the float vector
 * (`memories_vec_float`), which re-ranks the bit candidates by true cosine through
 * sqlite-vec and serves exact scans under narrow filters. `seq` only grows (AUTOINCREMENT
 * never reuses one), so a reader that has seen seq S has seen every row committed before it;
 * `memory_bit_counts` lets it notice deletions without counting the key's rows.
 * Created when a model is adopted; neither table depends on the model's width.
 */
export const VECTOR_TABLES_SQL = `
  CREATE TABLE IF NOT EXISTS memories_vec_float (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS memories_bits (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL UNIQUE,
    api_key_id TEXT NOT NULL,
    bits BLOB NOT NULL
  );
  CREATE INDEX IF NOT EXISTS memories_bits_key_seq ON memories_bits (api_key_id, seq);
  CREATE TABLE IF NOT EXISTS memory_bit_counts (api_key_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TRIGGER IF NOT EXISTS memories_bits_insert AFTER INSERT ON memories_bits BEGIN
    INSERT INTO memory_bit_counts (api_key_id, n) VALUES (new.api_key_id, 1)
      ON CONFLICT (api_key_id) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER IF NOT EXISTS memories_bits_delete AFTER DELETE ON memories_bits BEGIN
    UPDATE memory_bit_counts SET n = n - 1 WHERE api_key_id = old.api_key_id;
  END;
  ${vectorCleanupTriggers('memories_bits')}
`;

/**
 * Empties both vector tables for a re-embed. Rows are deleted rather than the tables
 * dropped, so `seq` keeps growing and cached copies see the deletions.
 */
export const CLEAR_VECTORS_SQL = `
  DELETE FROM memories_bits;
  DELETE FROM memories_vec_float;
`;

/** The version-2..4 layout: sign bits in a vec0 table partitioned by key (see migrateToV5). */
function v2VectorTableSql(dimensions: number): string {
  return `
    CREATE TABLE IF NOT EXISTS memories_vec_float (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
    CREATE VIRTUAL TABLE IF NOT EXISTS memories_vec USING vec0(
      memory_id INTEGER PRIMARY KEY,
      api_key_id TEXT PARTITION KEY,
      embedding bit[${bitWidth(dimensions)}]
    );
    ${vectorCleanupTriggers('memories_vec')}
  `;
}

const DROP_V2_VECTOR_TABLES_SQL = `
  DROP TRIGGER IF EXISTS memories_vec_delete;
  DROP TRIGGER IF EXISTS memories_vec_stale;
  DROP TABLE IF EXISTS memories_vec;
  DROP TABLE IF EXISTS memories_vec_float;
`;

/**
 * Version 5: the sign bits move from sqlite-vec's vec0 table into a plain table. Its
 * partitioned KNN scanned a 100k-memory key in 14 ms at the k the re-rank needs; the
 * in-memory scan it feeds takes under 1 ms. The float vectors stay where they are.
 */
function migrateToV5(db: SqliteDatabase): void {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get()) return;
  db.exec(`
    DROP TRIGGER IF EXISTS memories_vec_delete;
    DROP TRIGGER IF EXISTS memories_vec_stale;
    ${VECTOR_TABLES_SQL}
    INSERT INTO memories_bits (memory_id, api_key_id, bits)
      SELECT memory_id, api_key_id, embedding FROM memories_vec ORDER BY memory_id;
    DROP TABLE memories_vec;
  `);
}

/** bit vectors come in whole bytes; a width that is not a multiple of 8 is padded with zero bits. */
export function bitWidth(dimensions: number): number {
  return Math.ceil(dimensions / 8) * 8;
}

/** Sign quantization: bit i is set when component i is positive; the last byte is zero-padded. */
export function signBits(vector: Float32Array): Buffer {
  const bits = Buffer.alloc(Math.ceil(vector.length / 8));
  for (let i = 0; i < vector.length; i++) if (vector[i]! > 0) bits[i >> 3]! |= 1 << (i & 7);
  return bits;
}

/**
 * Version 2: per-key counts kept by triggers (the cap check no longer counts a key's rows
 * on every write) and the bit + float vector layout; float vectors of a version-1 store
 * are carried over, so nothing needs re-embedding.
 */
function migrateToV2(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE memory_key_counts (api_key_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO memory_key_counts (api_key_id, n) SELECT api_key_id, COUNT(*) FROM memories GROUP BY api_key_id;
    CREATE TRIGGER memories_count_insert AFTER INSERT ON memories BEGIN
      INSERT INTO memory_key_counts (api_key_id, n) VALUES (new.api_key_id, 1)
        ON CONFLICT (api_key_id) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
      UPDATE memory_key_counts SET n = n - 1 WHERE api_key_id = old.api_key_id;
    END;
  `);
  const model = db.prepare("SELECT value FROM memory_settings WHERE name = 'embedding_model'").get() as
    | { value: string }
    | undefined;
  const old = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get();
  if (!model || !old) return;
  const { dimensions } = JSON.parse(model.value) as { dimensions: number };
  const rows = db.prepare('SELECT memory_id, api_key_id, embedding FROM memories_vec').all() as {
    memory_id: number;
    api_key_id: string;
    embedding: Buffer;
  }[];
  db.exec(DROP_V2_VECTOR_TABLES_SQL);
  db.exec(v2VectorTableSql(dimensions));
  const float = db.prepare('INSERT INTO memories_vec_float (memory_id, embedding) VALUES (?, ?)');
  const bits = db.prepare(
    'INSERT INTO memories_vec (memory_id, api_key_id, embedding) VALUES (?, ?, vec_bit(?))',
  );
  for (const row of rows) {
    const vector = new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.length / 4);
    float.run(BigInt(row.memory_id), row.embedding);
    bits.run(BigInt(row.memory_id), row.api_key_id, signBits(vector));
  }
}
