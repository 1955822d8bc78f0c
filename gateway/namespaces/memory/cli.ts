/**
 * `npm run memory -- fetch-model [--from <wheel file or URL>]`: sets up all-MiniLM-L6-v2
 * for MEMORY_EMBEDDINGS=minilm (download, digest checks, ONNX graph built once, cached
 * in MEMORY_MODEL_DIR). A second run finds it and returns at once.
 *
 * `npm run memory -- reembed`: switches the memory store to the configured embedding
 * model. Every stored vector is dropped, every memory marked pending, and the memories
 * are embedded again here (running gateways also pick pending rows up). Search keeps
 * working keyword-only meanwhile.
 */
import { Command, CommanderError } from 'commander';
import { type GatewayConfig, loadGatewayConfig } from '../../config.ts';
import { createLogger } from '../../logger.ts';
import { Embedder, EmbedderUnavailable } from './embeddings/embedder.ts';
import { EmbeddingIndexer } from './embeddings/indexer.ts';
import { miniLmDir } from './embeddings/minilm/files.ts';
import { openMemoryStore, providerSettings } from './engine.ts';
import { Progress } from './progress.ts';
import { loadMemorySettings } from './settings.ts';
import type { MemoryStore } from './store/types.ts';
import { exportMemories, importMemories, type KeyLookUp, type TransferContext } from './transfer.ts';

const EXIT_CODES = `
Exit codes:
  0  done
  1  failed or stopped (the message says why; a failed reembed changed nothing; an import
     keeps every line it reported imported)
  2  usage error: unknown command or option, or MEMORY_EMBEDDINGS=none for reembed
  3  import done, but some lines were bad and skipped (each is named by its line number)`;

const settings = loadMemorySettings(process.env);

async function fetchModel(options: { from?: string }): Promise<void> {
  const dir = miniLmDir(settings.MEMORY_MODEL_DIR);
  // Imported here only: the setup pulls in onnxruntime, which reembed does not need.
  const { fetchMiniLm } = await import('./embeddings/minilm/setup.ts');
  const started = performance.now();
  try {
    const outcome = await fetchMiniLm({
      dir,
      ...(options.from ? { from: options.from } : {}),
      log: (line) => console.log(line),
    });
    console.log(
      outcome.built
        ? `all-MiniLM-L6-v2 is set up in ${dir} (${((performance.now() - started) / 1000).toFixed(1)} s); use MEMORY_EMBEDDINGS=minilm, then \`npm run memory -- reembed\` if the store holds another model's vectors`
        : `all-MiniLM-L6-v2 is already set up in ${dir}`,
    );
  } catch (error) {
    console.error(`fetch-model failed: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

const program = new Command('npm run memory --')
  .description("the memory store's embedding model: fetch it, or re-embed every memory with it")
  .showHelpAfterError()
  .exitOverride();
program
  .command('fetch-model')
  .description(
    'set up all-MiniLM-L6-v2 (MEMORY_EMBEDDINGS=minilm) in MEMORY_MODEL_DIR; a second run returns at once',
  )
  .option('--from <wheel>', 'a wheel file or URL to take the model from instead of PyPI')
  .action(fetchModel);
program
  .command('reembed')
  .description(
    'drop every stored vector and embed all memories again with the configured model (search stays keyword-only meanwhile)',
  )
  .action(reembed);
program
  .command('import')
  .description(
    'write the memories of a JSONL file (one memory per line) into a key; a second run duplicates nothing',
  )
  .argument(
    '<file>',
    'the file: {"content": …, "tags", "metadata", "namespace", "key", "pinned", "occurred_at", "expires_at"} per line',
  )
  .requiredOption('--key <keyId>', 'the API key id the memories belong to, key_… (`npm run keys -- list`)')
  .option('--strict', 'stop at the first bad line (lines before it stay imported)')
  .option('--embed', 'embed the imported memories here and wait, instead of leaving them to the gateways')
  .action(importCommand);
program
  .command('export')
  .description("write a key's memories as JSONL, the format import reads, oldest first")
  .requiredOption('--key <keyId>', 'the API key id, key_… (`npm run keys -- list`)')
  .option('--out <file>', 'write to this file (default: standard output)')
  .option('--namespace <namespace>', 'only this namespace')
  .action(exportCommand);
for (const command of [program, ...program.commands]) {
  command.showHelpAfterError().addHelpText('after', EXIT_CODES);
}

/**
 * What the command needs from outside the namespace, given by its process entry
 * (gateway/memory-command.ts): the key store, which a namespace never opens itself.
 */
export interface MemoryCliParts {
  lookUpKey: KeyLookUp;
  /** The message of an error that ends the command with exit code 1 (the key store could not be opened), else null. */
  failure(error: unknown): string | null;
}

let parts: MemoryCliParts;

export async function runMemoryCli(given: MemoryCliParts): Promise<void> {
  parts = given;
  try {
    await program.parseAsync(process.argv.slice(2), { from: 'user' });
  } catch (error) {
    const failure = parts.failure(error);
    if (failure !== null) {
      console.error(failure);
      process.exitCode = 1;
    }
    // Commander printed the message and the usage already; --help is not an error.
    else if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else throw error;
  }
}

function transferContext(config: GatewayConfig): TransferContext {
  return {
    settings,
    config,
    openStore: () => openMemoryStore(config.DATA_DIR, config.DATABASE_URL),
    lookUpKey: parts.lookUpKey,
  };
}

async function importCommand(file: string, options: { key: string; strict?: boolean; embed?: boolean }) {
  const config = loadGatewayConfig();
  const imported = await importMemories(file, options, transferContext(config));
  if (!imported) return;
  const { store, pending } = imported;
  try {
    if (pending === 0) return;
    if (!options.embed || settings.MEMORY_EMBEDDINGS === 'none') {
      console.log(
        `${pending} memories wait for their embedding: keyword search finds them now, and running gateways embed them in the background (within MEMORY_EMBED_RETRY_MS); --embed embeds them here`,
      );
      return;
    }
    const code = process.exitCode;
    const embedder = newEmbedder();
    try {
      await embedPending(store, embedder, config, pending);
    } finally {
      await embedder.close();
    }
    // The import's own outcome (some lines skipped) stands unless the embedding failed.
    if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
  } finally {
    await store.close();
  }
}

async function exportCommand(options: { key: string; out?: string; namespace?: string }) {
  await exportMemories(options, transferContext(loadGatewayConfig()));
}

function newEmbedder(): Embedder {
  return new Embedder(providerSettings(settings), {
    threads: settings.MEMORY_EMBED_THREADS,
    queryTimeoutMs: settings.MEMORY_EMBED_TIMEOUT_MS,
    nice: settings.MEMORY_EMBED_NICE,
  });
}

/** Embeds the store's pending rows in this process, with a progress line; the count is for the line only. */
async function embedPending(
  store: MemoryStore,
  embedder: Embedder,
  config: GatewayConfig,
  count: number,
): Promise<void> {
  const progress = new Progress('embedding', count);
  const indexer = new EmbeddingIndexer(store, embedder, createLogger(config.LOG_LEVEL), {
    batchSize: 32,
    retryMs: 60_000,
    onStored: (rows) => progress.add(rows),
  });
  indexer.kick();
  await indexer.idle();
  await indexer.close();
  progress.finish();
  if (indexer.lastError) {
    console.error(`stopped early: ${indexer.lastError}; running gateways will continue`);
    process.exitCode = 1;
  } else console.log('done');
}

async function reembed(): Promise<void> {
  const config = loadGatewayConfig();
  if (settings.MEMORY_EMBEDDINGS === 'none') {
    console.error('MEMORY_EMBEDDINGS=none: there is no model to embed with');
    process.exit(2);
  }
  const store = openMemoryStore(config.DATA_DIR, config.DATABASE_URL);
  const embedder = newEmbedder();
  try {
    // Before any vector is dropped: the model must answer (an HTTP model without
    // EMBEDDINGS_DIMENSIONS also reveals its width here; minilm must be fetched).
    try {
      await embedder.embed(['dimension probe']);
    } catch (error) {
      const reason = error instanceof EmbedderUnavailable ? error.message : (error as Error).message;
      console.error(`the configured model does not answer, nothing was changed: ${reason}`);
      process.exitCode = 1;
      return;
    }
    const model = embedder.model!;
    const marked = await store.resetEmbeddings(model);
    console.log(
      `store now holds ${model.model} (${model.dimensions} dimensions); ${marked} memories to embed`,
    );
    await embedPending(store, embedder, config, marked);
  } finally {
    await embedder.close();
    await store.close();
  }
}
