/**
 * One DATA_DIR shared by two real gateway processes, the first serving from three uWS
 * listener threads (each with its own SQLite connection, embedder pool and indexer), the
 * second on node:http. Writes, upserts, dedup and the cap race from both at once; the
 * file must end with no lost rows, no duplicate upsert keys or contents, a cap that holds
 * and says what it evicted, and keys that still cannot see each other.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type GatewayProcess, startGatewayProcess } from '../../support/gateway-process.ts';
import { freePort, mintKey, waitFor } from '../../support/harness.ts';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../support/openai-embeddings.ts';
import { postToolCall } from '../../support/tool-call.ts';

const CAP = 100;
let dataDir: string;
let embeddings: EmbeddingsServer;
let threaded: GatewayProcess;
let single: GatewayProcess;
let alice: string;
let bob: string;

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field
type Json = Record<string, any>;

let calls = 0;
/** One tools/call on a fresh connection, alternating between the two processes. */
async function call(key: string, name: string, args: Json, via?: GatewayProcess): Promise<Json> {
  const gateway = via ?? (calls++ % 2 === 0 ? threaded : single);
  const response = await postToolCall(`${gateway.url}/memory/mcp`, key, name, args, {
    // A new connection per call lets the kernel spread calls over the listener threads.
    headers: { connection: 'close' },
  });
  const body = (await response.json()) as { result: Json };
  return body.result;
}

async function ok(key: string, name: string, args: Json, via?: GatewayProcess): Promise<Json> {
  const result = await call(key, name, args, via);
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

async function everything(key: string): Promise<Json[]> {
  const all: Json[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(key, 'memory_export', { limit: 200, ...(cursor ? { cursor } : {}) });
    all.push(...page.memories);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'memory-processes-'));
  alice = mintKey(dataDir, 'alice', 'test-suite').key;
  bob = mintKey(dataDir, 'bob', 'test-suite').key;
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test' });
  const env = {
    DATA_DIR: dataDir,
    MEMORY_EMBEDDINGS: 'openai',
    EMBEDDINGS_URL: embeddings.url,
    EMBEDDINGS_API_KEY: 'sk-test',
    EMBEDDINGS_DIMENSIONS: '32',
    MEMORY_MAX_PER_KEY: String(CAP),
    MEMORY_EMBED_RETRY_MS: '200',
  };
  threaded = await startGatewayProcess({
    ...env,
    HTTP_ENGINE: 'uws',
    GATEWAY_THREADS: '3',
    PORT: String(await freePort()),
  });
  single = await startGatewayProcess(env);
});

after(async () => {
  await threaded?.stop();
  await single?.stop();
  await embeddings?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('memory shared by listener threads and a second process on one DATA_DIR', () => {
  test('the threaded process really serves from three threads', async () => {
    // The process is reachable once its first thread listens; the others report a moment later.
    const said = () => /serving from 3 listener threads/.test(threaded.lines.join('\n'));
    await waitFor(said, {
      what: 'the threaded gateway to log "serving from 3 listener threads"',
      timeoutMs: 30_000,
    });
    assert.match(threaded.lines.join('\n'), /serving from 3 listener threads/);
  });

  test('concurrent writes from both processes: every answered write is stored once', async () => {
    const contents = Array.from({ length: 60 }, (_, i) => `alice fact number ${i} about the build`);
    const written = await Promise.all(contents.map((content) => ok(alice, 'memory_write', { content })));
    assert.ok(written.every((w) => w.status === 'created'));
    const stored = await everything(alice);
    assert.equal(stored.length, 60);
    assert.equal(new Set(stored.map((m) => m.id)).size, 60);
    assert.deepEqual(stored.map((m) => m.content).sort(), [...contents].sort());
  });

  test('racing upserts of one key leave one memory; racing identical writes dedup to one', async () => {
    const upserts = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ok(alice, 'memory_write', { key: 'profile', content: `profile version ${i % 3}` }),
      ),
    );
    assert.equal(upserts.filter((u) => u.status === 'created').length, 1);
    assert.equal(new Set(upserts.map((u) => u.id)).size, 1);
    const twins = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ok(alice, 'memory_write', { content: 'the deploy window is Tuesday', tags: [`t${i % 4}`] }),
      ),
    );
    assert.equal(twins.filter((t) => t.status === 'created').length, 1);
    assert.equal(new Set(twins.map((t) => t.id)).size, 1);
    const stored = await everything(alice);
    assert.equal(stored.filter((m) => m.key === 'profile').length, 1);
    const twin = stored.filter((m) => m.content === 'the deploy window is Tuesday');
    assert.equal(twin.length, 1);
    assert.deepEqual([...twin[0]!.tags].sort(), ['t0', 't1', 't2', 't3']);
    assert.equal(stored.length, 62);
  });

  test('the cap holds under racing writes: pinned survive, every eviction is reported once', async () => {
    const pinned = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        ok(bob, 'memory_write', { content: `bob pinned ${i}`, pinned: true }),
      ),
    );
    const racing = await Promise.all(
      Array.from({ length: 150 }, (_, i) => ok(bob, 'memory_write', { content: `bob note ${i}` })),
    );
    const created = [...pinned, ...racing].map((w) => w.id as string);
    const evicted = racing.flatMap((w) => w.evicted_ids as string[]);
    assert.equal(new Set(evicted).size, evicted.length, 'an id was evicted twice');
    const stored = await everything(bob);
    assert.equal(stored.length, CAP);
    const remaining = new Set(stored.map((m) => m.id as string));
    for (const id of evicted) assert.ok(!remaining.has(id), 'an evicted id is still stored');
    // Every memory written is either still stored or was reported evicted, never both or neither.
    assert.deepEqual([...remaining, ...evicted].sort(), [...created].sort());
    for (const p of pinned) assert.ok(remaining.has(p.id));
  });

  test('keys stay apart, and every memory gets its vector from one of the indexers', async () => {
    const mine = await everything(alice);
    assert.equal(mine.length, 62);
    for (const via of [threaded, single]) {
      const result = await call(bob, 'memory_get', { id: mine[0]!.id }, via);
      assert.equal(result.isError, true);
      assert.equal(result.content[0].text, 'memory not found');
      const hits = await ok(bob, 'memory_search', { query: 'alice fact build', mode: 'keyword' }, via);
      assert.equal(hits.hits.length, 0);
      assert.equal((await ok(bob, 'memory_stats', {}, via)).count, CAP);
    }
    await waitFor(
      async () => {
        const [a, b] = [await ok(alice, 'memory_stats', {}), await ok(bob, 'memory_stats', {})];
        return a.pending_embeddings + b.pending_embeddings === 0;
      },
      { what: "alice's and bob's pending embeddings to reach 0", timeoutMs: 40_000, intervalMs: 100 },
    );
    for (const key of [alice, bob]) {
      const stats = await ok(key, 'memory_stats', {});
      assert.equal(stats.pending_embeddings, 0);
      assert.equal(stats.failed_embeddings, 0);
    }
    const found = await ok(alice, 'memory_search', {
      query: 'alice fact number 7 about the build',
      mode: 'vector',
    });
    assert.ok(found.hits.length > 0);
    assert.ok(found.hits.every((h: Json) => mine.some((m) => m.id === h.id)));
  });

  test('a vector search on any thread of either process sees what the other process just wrote and deleted', async () => {
    const query = 'the grey heron nests beside the north pond';
    // Searches first, so listener threads of both processes hold alice's bits in memory.
    for (let i = 0; i < 8; i++) await ok(alice, 'memory_search', { query, mode: 'vector' });
    const written = await ok(alice, 'memory_write', { content: query }, single);
    await waitFor(async () => (await ok(alice, 'memory_stats', {}, single)).pending_embeddings === 0, {
      what: "alice's pending embeddings to reach 0",
      timeoutMs: 40_000,
      intervalMs: 100,
    });
    // Several calls to the threaded process: each connection may land on another thread.
    for (const via of [threaded, threaded, threaded, threaded, single]) {
      const found = await ok(alice, 'memory_search', { query, mode: 'vector', limit: 3 }, via);
      assert.equal(found.hits[0]?.id, written.id, JSON.stringify(found.hits));
    }
    await ok(alice, 'memory_delete', { id: written.id }, single);
    for (const via of [threaded, threaded, threaded, threaded, single]) {
      const found = await ok(alice, 'memory_search', { query, mode: 'vector', limit: 10, min_score: 0 }, via);
      // With no score floor the arm still answers, with alice's other memories.
      assert.equal(found.hits.length, 10);
      assert.ok(!found.hits.some((h: Json) => h.id === written.id), 'a deleted memory was found');
    }
  });
});
