import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { contentHash } from '../../../gateway/namespaces/memory/store/common.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { compiledEntry } from '../../support/compiled.ts';
import { startTestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';
import { startEmbeddingsServer } from '../../support/openai-embeddings.ts';

test('a store holding another model is searched keyword-only until `npm run memory -- reembed` switches it', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'memory-reembed-'));
  const embeddings = await startEmbeddingsServer({ apiKey: 'sk-x' });
  const env = {
    MEMORY_EMBEDDINGS: 'openai',
    EMBEDDINGS_URL: embeddings.url,
    EMBEDDINGS_API_KEY: 'sk-x',
    EMBEDDINGS_DIMENSIONS: '16',
  };
  try {
    // Vectors of an older 4-d model already sit in the store when the gateway starts.
    const store = new SqliteMemoryStore(join(dataDir, 'memory.sqlite'));
    await store.adoptEmbeddingModel({ model: 'old-model', dimensions: 4 });
    const gw = await startTestGateway({ dataDir, env });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
        requestInit: { headers: { 'X-API-Key': gw.apiKey } },
      }),
    );
    const written = (
      await client.callTool({ name: 'memory_write', arguments: { content: 'kept through a model change' } })
    ).structuredContent as { id: string };
    const search = async () =>
      (await client.callTool({ name: 'memory_search', arguments: { query: 'model change' } }))
        .structuredContent as {
        degraded?: string;
        hits: { id: string; source: string }[];
      };
    let before = await search();
    await waitFor(
      async () => {
        if (!before.degraded?.includes('stored vectors')) before = await search();
        return before.degraded?.includes('stored vectors');
      },
      { what: 'search to report stored vectors from the old model', timeoutMs: 5_000 },
    );
    assert.match(before.degraded ?? '', /stored vectors come from old-model .*`npm run memory -- reembed`/);
    assert.equal(before.hits[0]?.id, written.id);
    const pending = await store.pendingEmbeddings(10, 0);
    assert.equal(pending[0]?.contentHash, contentHash('kept through a model change'));
    await store.close();

    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [compiledEntry('gateway/memory-command.ts'), 'reembed'],
      {
        env: { ...process.env, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        cwd: join(import.meta.dirname, '../../..'),
      },
    );
    assert.match(
      stdout,
      /store now holds text-embedding-3-small \(16 dimensions\); 1 memories to embed\ndone/,
    );
    // Progress goes to stderr (stdout stays the result); without a terminal, plain lines.
    assert.match(stderr, /^embedding \[#+\] 100% 1\/1, [\d.]+\/s$/m);
    const after = new SqliteMemoryStore(join(dataDir, 'memory.sqlite'));
    assert.deepEqual(await after.embeddingModel(), { model: 'text-embedding-3-small', dimensions: 16 });
    assert.equal((await after.pendingEmbeddings(10, 0)).length, 0);
    await after.close();
    await client.close();
    await gw.close();
  } finally {
    await embeddings.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
