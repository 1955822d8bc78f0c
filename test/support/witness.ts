/**
 * The module witness (module-witness.mjs) for a gateway process: the settings that preload
 * it, and the lines it recorded. Tests that a code path is loaded only when needed start
 * the gateway with `env` and read `loaded()`.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const preload = pathToFileURL(join(import.meta.dirname, 'module-witness.mjs')).href;

export interface ModuleWitness {
  /** NODE_OPTIONS with the preload, and where and what to record (`match`: comma-separated parts). */
  env: Record<string, string>;
  /** One line per module loaded so far whose path matched. */
  loaded(): Promise<string[]>;
}

export function moduleWitness(dataDir: string, match: string): ModuleWitness {
  const record = join(dataDir, 'loaded.txt');
  return {
    env: {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim(),
      MODULE_WITNESS_FILE: record,
      MODULE_WITNESS_MATCH: match,
    },
    loaded: async () =>
      existsSync(record) ? (await readFile(record, 'utf8')).split('\n').filter(Boolean) : [],
  };
}
