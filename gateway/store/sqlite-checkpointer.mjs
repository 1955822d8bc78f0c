// Runs on its own thread: copies the WAL back into the database file (PASSIVE, so it never
// waits for or blocks a reader or writer) and pays the fsync that SQLite's automatic
// checkpoint would otherwise charge to whichever request committed the 1000th page.

import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

// The same build of better-sqlite3 as the connection that started this thread (sqlite-driver.ts
// picks it per Node version; this file runs without a TypeScript loader, so it is told the name).
const Database = createRequire(import.meta.url)(workerData.driver);

const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked by another connection's checkpoint: the next tick tries again.
  }
}, workerData.intervalMs);

parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
