import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { NAMESPACE_NAMES } from '../../gateway/core/namespace-names.ts';
import { NAMESPACES } from '../../gateway/namespaces/registry.ts';

test('every namespace folder is mounted by the registry, and nothing else is', async () => {
  const folder = join(import.meta.dirname, '../../gateway/namespaces');
  const folders = (await readdir(folder, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  assert.deepEqual(NAMESPACES.map((namespace) => namespace.name).sort(), folders);
});

test('the names the keys CLI offers (core/namespace-names.ts) are the registry names, in its order', () => {
  assert.deepEqual(
    NAMESPACES.map((namespace) => namespace.name),
    [...NAMESPACE_NAMES],
  );
});
