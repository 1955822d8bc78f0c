// Runs on its own thread: copies the WAL back into the database file (PASSIVE, so it never
// waits for or blocks a reader or writer) and pays the fsync that SQLite's automatic
// checkpoint would otherwise charge to whichever request committed the 1000th page.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

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
