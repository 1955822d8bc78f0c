import type { PgMigration } from '../../../store/index.ts';
import type { MemoryFilter } from './types.ts';

export const PG_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    name: 'memories with full-text index',
    up: `
      CREATE TABLE memories (
        id bigserial PRIMARY KEY,
        public_id uuid NOT NULL UNIQUE,
        api_key_id text NOT NULL,
        namespace text NOT NULL,
        key text,
        content text NOT NULL,
        content_hash text NOT NULL,
        tags text[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}',
        pinned boolean NOT NULL DEFAULT false,
        expires_at bigint,
        embedding_status text NOT NULL DEFAULT 'pending',
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
      );
      CREATE UNIQUE INDEX memories_upsert_key ON memories (api_key_id, namespace, key) WHERE key IS NOT NULL;
      CREATE INDEX memories_hash ON memories (api_key_id, namespace, content_hash);
      CREATE INDEX memories_key_created ON memories (api_key_id, pinned, created_at, id);
      CREATE INDEX memories_key_updated ON memories (api_key_id, pinned, updated_at, id);
      CREATE INDEX memories_pending ON memories (id) WHERE embedding_status = 'pending';
      CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX memories_tsv ON memories USING gin (content_tsv);
      CREATE INDEX memories_tags ON memories USING gin (tags);
      CREATE TABLE memory_settings (name text PRIMARY KEY, value text NOT NULL);
    `,
  },
  {
    // Each write purges the key's expired rows; this keeps that from reading the whole key.
    version: 2,
    name: 'expiry index per key',
    up: 'CREATE INDEX memories_key_expiry ON memories (api_key_id, expires_at) WHERE expires_at IS NOT NULL',
  },
  {
    // A memory whose superseder is deleted becomes current again.
    version: 3,
    name: 'superseded memories',
    up: `
      ALTER TABLE memories ADD COLUMN superseded_by uuid;
      CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
      CREATE FUNCTION memories_supersede_release() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE memories SET superseded_by = NULL WHERE superseded_by = OLD.public_id;
        RETURN OLD;
      END $$;
      CREATE TRIGGER memories_supersede_release AFTER DELETE ON memories FOR EACH ROW
        EXECUTE FUNCTION memories_supersede_release();
    `,
  },
  {
    // Event time, as SQLite's version 8: earlier rows take their write time.
    version: 4,
    name: 'event time (occurred_at)',
    up: `
      ALTER TABLE memories ADD COLUMN occurred_at bigint;
      UPDATE memories SET occurred_at = created_at;
      ALTER TABLE memories ALTER COLUMN occurred_at SET NOT NULL;
      CREATE INDEX memories_key_occurred ON memories (api_key_id, pinned, occurred_at, id);
    `,
  },
];

/** Created when a model is adopted: its width fixes the column type. */
export function pgVectorTableSql(dimensions: number): string {
  return `
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE IF NOT EXISTS memory_vectors (
      memory_id bigint PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
      api_key_id text NOT NULL,
      embedding vector(${dimensions}) NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_vectors_key ON memory_vectors (api_key_id);
    CREATE INDEX IF NOT EXISTS memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops);
    CREATE OR REPLACE FUNCTION memory_vectors_stale() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM memory_vectors WHERE memory_id = OLD.id;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS memories_vectors_stale ON memories;
    CREATE TRIGGER memories_vectors_stale AFTER UPDATE OF content ON memories FOR EACH ROW
      WHEN (OLD.content_hash IS DISTINCT FROM NEW.content_hash) EXECUTE FUNCTION memory_vectors_stale();
  `;
}

export const PG_DROP_VECTORS_SQL = `
  DROP TRIGGER IF EXISTS memories_vectors_stale ON memories;
  DROP TABLE IF EXISTS memory_vectors;
`;

/** Positional-parameter WHERE fragment over `m`; `params` continues the caller's list. */
export function pgFilter(apiKeyId: string, filter: MemoryFilter, now: number, params: unknown[]): string {
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const clauses = [`m.api_key_id = ${p(apiKeyId)}`];
  if (!filter.includeExpired) clauses.push(`(m.expires_at IS NULL OR m.expires_at > ${p(now)})`);
  if (filter.namespace !== undefined) clauses.push(`m.namespace = ${p(filter.namespace)}`);
  if (filter.tags && filter.tags.length > 0) {
    clauses.push(`m.tags ${filter.tagMode === 'all' ? '@>' : '&&'} ${p(filter.tags)}::text[]`);
  }
  if (filter.metadata && Object.keys(filter.metadata).length > 0) {
    clauses.push(`m.metadata @> ${p(JSON.stringify(filter.metadata))}::jsonb`);
  }
  if (filter.createdAfter !== undefined) clauses.push(`m.created_at > ${p(filter.createdAfter)}`);
  if (filter.createdBefore !== undefined) clauses.push(`m.created_at < ${p(filter.createdBefore)}`);
  if (filter.updatedAfter !== undefined) clauses.push(`m.updated_at > ${p(filter.updatedAfter)}`);
  if (filter.occurredAfter !== undefined) clauses.push(`m.occurred_at > ${p(filter.occurredAfter)}`);
  if (filter.occurredBefore !== undefined) clauses.push(`m.occurred_at < ${p(filter.occurredBefore)}`);
  if (filter.currentOnly) clauses.push('m.superseded_by IS NULL');
  if (filter.pinned !== undefined) clauses.push(`m.pinned = ${p(filter.pinned)}`);
  return clauses.join(' AND ');
}

export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}
