/**
 * `npm run build` (and `prepare`, so `npm ci` leaves a runnable tree): compiles the runtime
 * code (gateway, broker-worker, shared, dev tools, the `npm start` supervisor) to `dist/`
 * with tsc, rewriting `.ts` import specifiers to `.js`, then copies the few plain `.mjs`
 * modules that worker threads load by URL. Incremental: an unchanged tree builds in seconds.
 * Plain JavaScript, because it must run before anything is compiled and without tsx.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Loaded by worker threads by URL beside their caller; tsc does not emit `.mjs` sources. */
const RUNTIME_MODULES = ['gateway/store/sqlite-checkpointer.mjs'];

if (!existsSync(tsc)) {
  // `npm ci --omit=dev` runs `prepare` too, without TypeScript: build on a machine with the
  // dev dependencies and ship dist/ with the tree.
  const have = existsSync(join(root, 'dist', 'gateway', 'main.js'))
    ? 'the existing dist/ stays'
    : 'no dist/ yet';
  process.stderr.write(`build skipped: TypeScript is not installed (dev dependencies omitted); ${have}\n`);
  process.exit(0);
}

const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);
for (const file of RUNTIME_MODULES) {
  const target = join(root, 'dist', file);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(root, file), target);
}
