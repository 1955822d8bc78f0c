/**
 * A query embedding that runs out of time falls back without harming the process: the
 * wait ends, the model run on its thread does not. Cancelling the run terminated the
 * thread in the middle of onnxruntime's work, and the native error thrown during teardown
 * aborted the whole process (std::terminate), so this file would not finish. Real
 * all-MiniLM-L6-v2 in the piscina pool.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Embedder, EmbedderUnavailable } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';
import { waitFor } from '../../support/harness.ts';
import { setUpMiniLm } from '../../support/minilm.ts';

before(async () => {
  await setUpMiniLm();
});

test('queries that time out during model load and during model runs leave the process standing', async () => {
  // Short bounds fall inside the model's load, longer ones inside a run once it is loaded.
  for (const queryTimeoutMs of [1, 50, 200, 800]) {
    const embedder = new Embedder({ provider: 'minilm' }, { threads: 1, queryTimeoutMs });
    let timedOut = 0;
    try {
      for (let i = 0; i < 12; i++) {
        await embedder.embedQuery(`question ${i} about the weather in spring`).then(
          (vector) => assert.equal(vector.length, 384),
          (error: unknown) => {
            assert.ok(error instanceof EmbedderUnavailable);
            assert.equal(error.message, 'query embedding timed out');
            timedOut++;
          },
        );
      }
    } finally {
      await embedder.close();
    }
    if (queryTimeoutMs === 1) assert.ok(timedOut > 0, 'a 1 ms bound timed out no query');
  }
});

test("a timed-out query's late answer is kept: asking again finds it", async () => {
  const embedder = new Embedder({ provider: 'minilm' }, { threads: 1, queryTimeoutMs: 1 });
  try {
    await assert.rejects(embedder.embedQuery('where did the user move to?'), /timed out/);
    let vector: Float32Array | undefined;
    await waitFor(
      async () => {
        vector = await embedder.embedQuery('where did the user move to?').catch(() => undefined);
        return vector !== undefined;
      },
      { what: 'the late answer to be cached', timeoutMs: 60_000 },
    );
    assert.equal(vector!.length, 384);
  } finally {
    await embedder.close();
  }
});
