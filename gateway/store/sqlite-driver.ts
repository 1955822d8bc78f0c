import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Which build of better-sqlite3 this runtime loads. Both speak the same API; they differ in
 * how the binary reaches the machine:
 *
 * - Node 20: better-sqlite3 12, compiled from source by `npm ci` (its prebuild-install asks
 *   GitHub, which deploy hosts often cannot reach, then falls back to node-gyp). That binary
 *   is tied to Node 20's ABI (NODE_MODULE_VERSION 115), so it cannot serve 22 or 24.
 * - Node 22 and 24: better-sqlite3 13 (installed under the alias `better-sqlite3-napi`), a
 *   Node-API addon whose linux/darwin/win32 binaries ship inside the npm tarball: nothing to
 *   compile, and one binary loads on every Node-API runtime. It needs Node-API features that
 *   Node 20 lacks (it segfaults on load there), which is why 12 stays for 20.
 *
 * Every SQLite connection in the process (and the checkpointer thread, which gets the name in
 * its workerData) must come from here, or two copies of SQLite would share one file.
 */
export const SQLITE_DRIVER: 'better-sqlite3' | 'better-sqlite3-napi' =
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

const require = createRequire(import.meta.url);

export const Database: typeof BetterSqlite3 = require(SQLITE_DRIVER);
