import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The checkout (or installed copy) that holds package.json, found by walking up from the
 * calling file. Counting `..` breaks once the same file also runs compiled from `dist/`,
 * one level deeper; caches (`.cache/`) and data (`data/`) must land in the same place either way.
 */
export function packageRoot(fromDir: string): string {
  let dir = fromDir;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fromDir}`);
    dir = up;
  }
  return dir;
}
