/**
 * Stores for the quality benchmark: embeddings by the product's own embedder (cached under
 * .cache/memory-quality per model), a fresh SQLite file or a native Postgres of its own, and one key
 * per conversation filled as an agent would fill it, then embedded and passed through the
 * automatic update rule exactly as the indexer does.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Embedder } from '../gateway/namespaces/memory/embeddings/embedder.ts';
import type { EmbeddingProviderSettings } from '../gateway/namespaces/memory/embeddings/types.ts';
import { plainWrite } from '../gateway/namespaces/memory/store/common.ts';
import { PostgresMemoryStore } from '../gateway/namespaces/memory/store/postgres-store.ts';
import { SqliteMemoryStore } from '../gateway/namespaces/memory/store/sqlite-store.ts';
import type { MemoryStore } from '../gateway/namespaces/memory/store/types.ts';
import { startOwnPostgres } from '../test/support/own-postgres.ts';
import { benchRoot } from './child.ts';
import { type Conversation, stored, turnTime, type Variant } from './memory-quality-set.ts';

export type StoreKind = 'sqlite' | 'postgres';
const MAX = 100_000;

/** Unit vectors for every text, from the cache where the same model embedded it before. */
export async function embedTexts(
  settings: EmbeddingProviderSettings,
  texts: string[],
  log: (line: string) => void,
): Promise<{ vectors: Map<string, Float32Array>; model: { model: string; dimensions: number } }> {
  const embedder = new Embedder(settings, { threads: 2, queryTimeoutMs: 120_000 });
  try {
    if (!embedder.model) await embedder.embed(['dimension probe']);
    const model = embedder.model!;
    const dir = join(benchRoot, '.cache', 'memory-quality');
    const file = join(dir, `${createHash('sha256').update(model.model).digest('hex').slice(0, 16)}.json`);
    const cached: Record<string, number[]> = existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : {};
    const hash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);
    const missing = [...new Set(texts)].filter((text) => !cached[hash(text)]);
    if (missing.length > 0) log(`memory-quality: embedding ${missing.length} texts with ${model.model}`);
    for (let i = 0; i < missing.length; i += 64) {
      const batch = missing.slice(i, i + 64);
      const out = await embedder.embed(batch);
      batch.forEach((text, j) => {
        cached[hash(text)] = Array.from(out[j]!);
      });
    }
    if (missing.length > 0) {
      await mkdir(dir, { recursive: true });
      await writeFile(file, JSON.stringify(cached));
    }
    return { vectors: new Map(texts.map((text) => [text, Float32Array.from(cached[hash(text)]!)])), model };
  } finally {
    await embedder.close();
  }
}

export interface OpenStore {
  store: MemoryStore;
  close(): Promise<void>;
}

export async function openStore(kind: StoreKind): Promise<OpenStore> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-bench-memory-quality-'));
    const store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
    return {
      store,
      async close() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await startOwnPostgres();
  const store = new PostgresMemoryStore(pg.url, { max: 4 });
  return {
    store,
    async close() {
      await store.close();
      await pg.close();
    },
  };
}

export interface Built {
  /** Conversation id → api key id. */
  keys: Map<string, string>;
  /** "conversation/session/turn" → memory id. */
  ids: Map<string, string>;
}

let generation = 0;

/** One key per conversation (fresh ids per call, so one store can hold several builds). */
export async function buildKeys(
  store: MemoryStore,
  conversations: Conversation[],
  variant: Variant,
  vectors: Map<string, Float32Array>,
  model: { model: string; dimensions: number },
  supersedeAbove: number,
): Promise<Built> {
  generation++;
  const keys = new Map<string, string>();
  const ids = new Map<string, string>();
  await store.adoptEmbeddingModel(model);
  for (const conversation of conversations) {
    const key = `quality-${generation}-${variant}-${conversation.id}`;
    keys.set(conversation.id, key);
    for (const [s, session] of conversation.sessions.entries()) {
      for (const [t, turn] of session.turns.entries()) {
        if (!stored(turn, variant)) continue;
        const written = await store.write(key, plainWrite(turn.content), MAX, turnTime(conversation, s, t));
        ids.set(`${conversation.id}/${s}/${t}`, written.memory.id);
      }
    }
  }
  // What the indexer does: store each batch's vectors, then apply the update rule to it.
  for (;;) {
    const batch = await store.pendingEmbeddings(64, 0);
    if (batch.length === 0) break;
    await store.storeEmbeddings(
      batch.map((row) => ({
        rowId: row.rowId,
        contentHash: row.contentHash,
        vector: vectors.get(row.content)!,
      })),
    );
    await store.supersedeSimilar(
      batch.map((row) => row.rowId),
      supersedeAbove,
    );
  }
  return { keys, ids };
}
