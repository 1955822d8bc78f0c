/**
 * Child processes in tests run the compiled tree (`dist/`), as operators run it: plain node
 * starts one in about a third of the CPU that tsx needs to compile its sources, and the
 * suite starts a few hundred of them. `npm test` builds before any test file runs
 * (test/run.ts); a file run some other way needs `npm run build` first.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** `gateway/main.ts` → the absolute path of `dist/gateway/main.js`, which must exist. */
export function compiledEntry(source: string): string {
  const compiled = join(root, 'dist', source.replace(/\.ts$/, '.js'));
  if (!existsSync(compiled))
    throw new Error(`${compiled} is missing: run \`npm run build\` (npm test builds before the tests run)`);
  return compiled;
}
