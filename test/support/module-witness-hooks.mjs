/** The loader-thread half of module-witness.mjs: notes each matching ES module resolved. */
import { appendFileSync } from 'node:fs';

let witness = { file: '', match: '' };

export function initialize(data) {
  witness = data;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (witness.match.split(',').some((part) => resolved.url.includes(part)))
    appendFileSync(witness.file, `import ${resolved.url}\n`);
  return resolved;
}
