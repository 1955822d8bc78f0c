import type { SqliteMigration } from '../../../store/index.ts';

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
];

/** The vector table for one model width, and the triggers that drop a vector with its memory or content. */
export function vectorTableSql(dimensions: number): string {
  return `
    CREATE VIRTUAL TABLE IF NOT EXISTS memories_vec USING vec0(
      memory_id INTEGER PRIMARY KEY,
      api_key_id TEXT PARTITION KEY,
      embedding float[${dimensions}] distance_metric=cosine
    );
    CREATE TRIGGER IF NOT EXISTS memories_vec_delete AFTER DELETE ON memories BEGIN
      DELETE FROM memories_vec WHERE memory_id = old.id;
    END;
    CREATE TRIGGER IF NOT EXISTS memories_vec_stale AFTER UPDATE OF content ON memories
      WHEN old.content_hash <> new.content_hash BEGIN
      DELETE FROM memories_vec WHERE memory_id = old.id;
    END;
  `;
}

export const DROP_VECTOR_TABLE_SQL = `
  DROP TRIGGER IF EXISTS memories_vec_delete;
  DROP TRIGGER IF EXISTS memories_vec_stale;
  DROP TABLE IF EXISTS memories_vec;
`;
