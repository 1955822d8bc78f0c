import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runPython, testPython } from './python.ts';

test('the cached Python environment holds every pinned requirement at its pinned version', {
  timeout: 600_000,
}, async () => {
  const pins = (await readFile(join(import.meta.dirname, 'python-requirements.txt'), 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split('=='));
  assert.ok(pins.length > 0);
  const python = await testPython();
  assert.match(python, /\.cache\/python-venv\/bin\/python$/);
  const script = 'import sys, importlib.metadata as m\nfor n in sys.argv[1:]: print(n, m.version(n))';
  const out = await runPython(
    script,
    pins.map(([name]) => name!),
  );
  for (const [name, version] of pins)
    assert.match(out, new RegExp(`^${name} ${version!.replaceAll('.', '\\.')}$`, 'm'));
});
