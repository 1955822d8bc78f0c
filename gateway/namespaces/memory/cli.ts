/**
 * `npm run memory -- reembed`: switches the memory store to the configured embedding
 * model. Every stored vector is dropped, every memory marked pending, and the memories
 * are embedded again here (running gateways also pick pending rows up). Search keeps
 * working keyword-only meanwhile.
 */
import { loadGatewayConfig } from '../../config.ts';
import { createLogger } from '../../logger.ts';
import { Embedder } from './embeddings/embedder.ts';
import { EmbeddingIndexer } from './embeddings/indexer.ts';
import { openMemoryStore, providerSettings } from './index.ts';
import { loadMemorySettings } from './settings.ts';

const [command] = process.argv.slice(2);
if (command !== 'reembed') {
  console.error('usage: npm run memory -- reembed');
  process.exit(2);
}
const config = loadGatewayConfig();
const settings = loadMemorySettings(process.env);
if (settings.MEMORY_EMBEDDINGS === 'none') {
  console.error('MEMORY_EMBEDDINGS=none: there is no model to embed with');
  process.exit(2);
}
const store = openMemoryStore(config.DATA_DIR, config.DATABASE_URL);
const embedder = new Embedder(providerSettings(settings), {
  threads: settings.MEMORY_EMBED_THREADS,
  queryTimeoutMs: settings.MEMORY_EMBED_TIMEOUT_MS,
  nice: settings.MEMORY_EMBED_NICE,
});
try {
  // An HTTP model without EMBEDDINGS_DIMENSIONS reveals its width on the first call.
  if (!embedder.model) await embedder.embed(['dimension probe']);
  const model = embedder.model!;
  const marked = await store.resetEmbeddings(model);
  console.log(`store now holds ${model.model} (${model.dimensions} dimensions); ${marked} memories to embed`);
  const indexer = new EmbeddingIndexer(store, embedder, createLogger(config.LOG_LEVEL), {
    batchSize: 32,
    retryMs: 60_000,
  });
  indexer.kick();
  await indexer.idle();
  await indexer.close();
  if (indexer.lastError) console.error(`stopped early: ${indexer.lastError}; running gateways will continue`);
  else console.log('done');
} finally {
  await embedder.close();
  await store.close();
}
