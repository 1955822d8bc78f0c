import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { NAMESPACE_FACTORIES } from '../../gateway/namespaces/registry.ts';

test('every namespace folder is mounted by the registry, and nothing else is', async () => {
  const folder = join(import.meta.dirname, '../../gateway/namespaces');
  const folders = (await readdir(folder, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  assert.deepEqual(Object.keys(NAMESPACE_FACTORIES).sort(), folders);
});
