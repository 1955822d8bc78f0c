/**
 * Preloaded with `NODE_OPTIONS=--import=<this file>` to record which modules a process
 * loads whose path contains MODULE_WITNESS_MATCH (or one of its comma-separated parts), one
 * line each into MODULE_WITNESS_FILE:
 * ES modules through a resolve hook (it runs on the loader thread, so it writes the file
 * itself) and CommonJS `require` through Module._load, which Node 20's hooks do not see.
 */
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.MODULE_WITNESS_FILE;
const match = process.env.MODULE_WITNESS_MATCH;
if (file && match) {
  register(new URL('./module-witness-hooks.mjs', import.meta.url), { data: { file, match } });
  const parts = match.split(',');
  const load = Module._load;
  Module._load = function witnessed(request, parent, isMain) {
    if (parts.some((part) => request.includes(part))) appendFileSync(file, `require ${request}\n`);
    return load.call(this, request, parent, isMain);
  };
}
