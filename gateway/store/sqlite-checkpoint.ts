import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './sqlite.ts';
import { SQLITE_DRIVER } from './sqlite-driver.ts';

/** 256 pages of 4 KiB: under a write load the WAL passes this within a second. */
const START_AT_BYTES = 1024 * 1024;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the connection that serves requests: a worker thread runs a
 * PASSIVE checkpoint every `intervalMs`, and the request connection's own automatic
 * checkpoint moves from 1000 to `fallbackPages` pages, a safety net should the worker
 * fall behind. With automatic checkpoints a write's p99 was 6.4 ms against 1.2 ms
 * without (6000 single-row writes, bench machine), since one write in a few hundred
 * paid for copying and syncing everything before it.
 */
export function startWalCheckpointer(
  db: SqliteDatabase,
  file: string,
  options: { intervalMs?: number; fallbackPages?: number } = {},
): WalCheckpointer {
  // Under writes without pause the WAL still reaches the fallback, and that checkpoint copies
  // what the thread has not yet: with a copy every 500 ms rather than every second, the worst
  // such stall per 14,400 writes was 62-69 ms (CPU and I/O wait) against 52-453 ms, in paired
  // store runs (docs/decisions/0120-checkpointer-every-500-ms.md).
  const intervalMs = options.intervalMs ?? 500;
  db.pragma(`wal_autocheckpoint = ${Math.trunc(options.fallbackPages ?? 20_000)}`);
  // The thread costs about 13.6 MiB of RSS (bench -- footprint), and a store written to only
  // at start-up (migrations, the embedding model's record) has next to nothing to checkpoint:
  // the WAL starts empty here, and the thread starts once it holds START_AT_BYTES (one stat
  // per interval until then), far below the fallback's 20,000 pages.
  db.pragma('wal_checkpoint(TRUNCATE)');
  let worker: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();
  const start = () => {
    const thread = new Worker(new URL('./sqlite-checkpointer.mjs', import.meta.url), {
      workerData: { driver: SQLITE_DRIVER, file, intervalMs },
    });
    thread.unref();
    // A failing worker (file removed, disk error) leaves the fallback checkpoint in charge.
    thread.on('error', () => {});
    exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    worker = thread;
  };
  const watch = setInterval(() => {
    if (walBytes(file) < START_AT_BYTES) return;
    clearInterval(watch);
    start();
  }, intervalMs);
  watch.unref();
  return {
    async stop() {
      clearInterval(watch);
      if (!worker) return;
      // Held again while it stops, or a process with nothing else to do would exit first.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
