/**
 * MEMORY_EMBEDDINGS=minilm before `npm run memory -- fetch-model` has run: the gateway
 * starts, says once what to run, memory search keeps answering from keywords, and once the
 * model is there the same gateway uses it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';
import { setUpMiniLm } from '../../support/minilm.ts';

test('minilm without a set-up model: one log line naming fetch-model, keywords meanwhile, no restart after', async () => {
  const modelsDir = await mkdtemp(join(tmpdir(), 'minilm-absent-'));
  const lines: string[] = [];
  const gw = await startTestGateway({
    env: {
      MEMORY_EMBEDDINGS: 'minilm',
      MEMORY_MODEL_DIR: modelsDir,
      MEMORY_MODEL_FETCH: 'off',
      MEMORY_EMBED_RETRY_MS: '200',
      LOG_LEVEL: 'info',
    },
    logDestination: { write: (line: string) => lines.push(line) },
  });
  const client = new Client({ name: 't', version: '1' });
  try {
    const warnings = lines.filter((line) => line.includes('fetch-model'));
    assert.equal(warnings.length, 1, lines.join(''));
    assert.match(warnings[0]!, /all-MiniLM-L6-v2 is not set up in .*run `npm run memory -- fetch-model`/);

    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/memory/mcp`), {
        requestInit: { headers: { 'X-API-Key': gw.apiKey } },
      }),
    );
    const written = (
      await client.callTool({ name: 'memory_write', arguments: { content: 'the deploy runs every Tuesday' } })
    ).structuredContent as { id: string };
    const search = async () =>
      (await client.callTool({ name: 'memory_search', arguments: { query: 'deploy Tuesday' } }))
        .structuredContent as { degraded?: string; hits: { id: string }[] };
    const stats = async () =>
      (await client.callTool({ name: 'memory_stats', arguments: {} })).structuredContent as {
        pending_embeddings: number;
        embedding: { provider: string; dimensions: number; available: boolean };
      };
    const before = await search();
    assert.equal(before.hits[0]?.id, written.id);
    assert.match(
      before.degraded ?? '',
      /semantic search unavailable: all-MiniLM-L6-v2 is not set up.*fetch-model/,
    );
    const waiting = await stats();
    assert.equal(waiting.embedding.provider, 'minilm');
    assert.equal(waiting.embedding.dimensions, 384);
    assert.equal(waiting.pending_embeddings, 1);

    // The operator runs fetch-model (here the shared cache appears in the configured
    // directory); the running gateway picks it up without a restart.
    const { files } = await setUpMiniLm();
    await symlink(files.dir, join(modelsDir, 'all-minilm-l6-v2'));
    const after = await search();
    assert.equal(after.degraded, undefined);
    assert.equal(after.hits[0]?.id, written.id);
    let pending = waiting.pending_embeddings;
    await waitFor(
      async () => {
        if (pending > 0) pending = (await stats()).pending_embeddings;
        return pending === 0;
      },
      { what: 'the indexer to embed the waiting memory', timeoutMs: 60_000 },
    );
    assert.equal(pending, 0, 'the indexer embedded the waiting memory at its next retry');
    assert.equal((await stats()).embedding.available, true);
  } finally {
    await client.close();
    await gw.close();
    await rm(modelsDir, { recursive: true, force: true });
  }
});
