import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A dependency loaded on its first use instead of at start-up. Each of Postgres, OIDC,
 * GraphQL, YAML, argon2 and the embedder pool costs several MiB of RSS once loaded, and a
 * process only needs the ones its settings and its callers actually reach (bench -- footprint).
 * Synchronous, so call sites stay as they were; ES-only packages load through require(esm).
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(specifier) as T;
    return loaded;
  };
}
