/**
 * What the memory tools run on: the store, the embedder, the indexer and the service. The
 * namespace (index.ts) imports this on the first memory call, so an idle gateway holds none
 * of it; the memory CLI imports it directly.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config.ts';
import type { CapabilityReport } from '../../mcp/namespace-contract.ts';
import { isPostgresUrl, sqlitePath } from '../../store/index.ts';
import type { LoadedParts } from '../deferred.ts';
import { Embedder } from './embeddings/embedder.ts';
import { EmbeddingIndexer } from './embeddings/indexer.ts';
import type { EmbeddingProviderSettings } from './embeddings/types.ts';
import { rerankSetup } from './rerank/config.ts';
import type { RerankOutcome } from './rerank/outcome.ts';
import { RerankStage } from './rerank/stage.ts';
import { MemoryService } from './service.ts';
import { type MemorySettings, SEARCH_DEFAULTS } from './settings.ts';
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
  tuning: { vectorCacheMb?: number; keyIndexMinVectors?: number; log?: Logger } = {},
): MemoryStore {
  const { vectorCacheMb, keyIndexMinVectors, log } = tuning;
  return isPostgresUrl(databaseUrl)
    ? new PostgresMemoryStore(databaseUrl, {
        ...(keyIndexMinVectors === undefined ? {} : { keyIndexMinVectors }),
        ...(log ? { log } : {}),
      })
    : new SqliteMemoryStore(
        sqlitePath(dataDir, 'memory'),
        vectorCacheMb === undefined ? {} : { vectorCacheBytes: vectorCacheMb * 1024 * 1024 },
      );
}

/**
 * The live parts. `capabilities` is the namespace's own, passed in so that the answer is the
 * same before and after the parts are loaded.
 */
export function memoryParts(
  settings: MemorySettings,
  {
    config,
    log,
    countRerank,
  }: { config: GatewayConfig; log: Logger; countRerank?: (outcome: RerankOutcome) => void },
  capabilities: () => Promise<CapabilityReport>,
): LoadedParts {
  const memoryLog = log.child({ namespace: 'memory' });
  const store = openMemoryStore(config.DATA_DIR, config.DATABASE_URL, {
    vectorCacheMb: settings.MEMORY_VECTOR_CACHE_MB,
    keyIndexMinVectors: settings.MEMORY_KEY_INDEX_VECTORS,
    log: memoryLog,
  });
  const embedder = new Embedder(providerSettings(settings), {
    threads: settings.MEMORY_EMBED_THREADS,
    queryTimeoutMs: settings.MEMORY_QUERY_EMBED_TIMEOUT_MS,
    nice: settings.MEMORY_EMBED_NICE,
  });
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
    new RerankStage(rerankSetup(settings), embedder, memoryLog, countRerank),
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
    capabilities,
    async health() {
      // A real read of the store: a lost Postgres or a vanished SQLite file fails it.
      await store.embeddingModel();
      return { ok: true };
    },
    // The whole store's pending rows, not this process's: every gateway on the store embeds them.
    backlog: () => store.pendingEmbeddingCount(),
    async close() {
      clearInterval(purge);
      await indexer.close();
      await embedder.close();
      await store.close();
    },
  };
}
