/**
 * The embedding indexer stands aside while writes arrive in a burst (indexer.ts, BurstYield):
 * no embedding call while a writer keeps committing, every row embedded once it stops, and
 * the wait bounded so a load that never pauses still gets its batches embedded. A real
 * SQLite store and the OpenAI-compatible contract server, which counts the calls it gets.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { Embedder } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';
import { type BurstYield, EmbeddingIndexer } from '../../../gateway/namespaces/memory/embeddings/indexer.ts';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { waitFor } from '../../support/harness.ts';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../support/openai-embeddings.ts';

let embeddings: EmbeddingsServer;
before(async () => {
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-burst' });
});
after(() => embeddings.close());

async function withIndexer(
  burst: BurstYield,
  body: (
    write: (text: string) => Promise<void>,
    store: SqliteMemoryStore,
    indexer: EmbeddingIndexer,
  ) => Promise<void>,
): Promise<void> {
  const store = new SqliteMemoryStore(':memory:');
  const embedder = new Embedder(
    {
      provider: 'openai',
      url: embeddings.url,
      model: 'm',
      apiKey: 'sk-burst',
      dimensions: 16,
      timeoutMs: 5_000,
    },
    { threads: 1, queryTimeoutMs: 5_000 },
  );
  const indexer = new EmbeddingIndexer(store, embedder, pino({ level: 'silent' }), {
    batchSize: 16,
    retryMs: 60_000,
    burst,
  });
  // What MemoryService.write does: commit, then tell the indexer.
  const write = async (text: string) => {
    const result = await store.write('key-1', plainWrite(text), 1_000_000, Date.now());
    assert.equal(result.memory.embeddingStatus, 'pending');
    indexer.written();
  };
  try {
    await body(write, store, indexer);
  } finally {
    await indexer.close();
    await embedder.close();
    await store.close();
  }
}

test('no embedding call while a writer keeps committing; every row embedded once it stops', async () => {
  // Any write in a window makes it busy; the wait is bounded far beyond this test.
  await withIndexer(
    { windowMs: 20, busyWrites: 0, calmWindows: 2, maxMs: 600_000 },
    async (write, store, indexer) => {
      const calls = embeddings.requests;
      // Each write waits for its group's commit (a turn of the event loop), so every window of
      // the indexer's timer sees writes until the loop ends.
      const until = Date.now() + 400;
      let n = 0;
      while (Date.now() < until) await write(`burst note number ${n++} about release ${n % 7}`);
      assert.equal(embeddings.requests, calls, `no embedding request during ${n} writes`);
      assert.equal((await store.stats('key-1', Date.now())).pendingEmbeddings, n);
      await waitFor(async () => (await store.stats('key-1', Date.now())).pendingEmbeddings === 0, {
        what: 'the burst to be embedded once the writes stopped',
      });
      assert.ok(embeddings.requests > calls);
      await indexer.idle();
    },
  );
});

test('a burst that never pauses still gets a batch embedded once the wait reaches maxMs', async () => {
  await withIndexer({ windowMs: 20, busyWrites: 0, calmWindows: 2, maxMs: 50 }, async (write, store) => {
    let n = 0;
    const embedded = async () => (await store.stats('key-1', Date.now())).pendingEmbeddings < n;
    while (!(await embedded())) {
      await write(`steady note number ${n++}`);
      if (n > 200_000) assert.fail('no batch was embedded during the writes');
    }
  });
});

test('a single write with no burst around it is embedded without a wait for maxMs', async () => {
  await withIndexer({ windowMs: 20, busyWrites: 8, calmWindows: 3, maxMs: 600_000 }, async (write, store) => {
    await write('one lone memory');
    await waitFor(async () => (await store.stats('key-1', Date.now())).pendingEmbeddings === 0, {
      what: 'the lone memory to be embedded',
    });
  });
});

test('a load that never pauses is held back once per pass: past maxMs the backlog is embedded while the writes go on', async () => {
  // Five writes per 20 ms window, every window busy: about 250 rows a second. Standing aside
  // again before every batch would embed 16 rows per maxMs (80 a second) and fall behind for good.
  await withIndexer({ windowMs: 20, busyWrites: 0, calmWindows: 2, maxMs: 200 }, async (write, store) => {
    let n = 0;
    const pending = async () => (await store.stats('key-1', Date.now())).pendingEmbeddings;
    let caughtUp = false;
    while (!caughtUp) {
      for (let i = 0; i < 5; i++) await write(`steady note number ${n++}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      caughtUp = n > 200 && (await pending()) <= 16;
      if (n > 5_000) assert.fail(`the backlog kept growing: ${await pending()} of ${n} rows pending`);
    }
  });
});
