import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { threadEntry } from '../shared/thread-entry.ts';
import { DRAIN_MS } from './instance.ts';
import { processLimitTable } from './limits/shared-table.ts';

export interface ListenerThreads {
  stop(): Promise<void>;
}

/** Each thread drains like the main one (DRAIN_MS), with a little room to close. */
const STOP_GRACE_MS = DRAIN_MS + 2_000;

/** Starts `count` extra listener threads on the configured port and waits until each listens. */
export async function startListenerThreads(count: number, log: Logger): Promise<ListenerThreads> {
  const workers: Worker[] = [];
  const started = Array.from({ length: count }, () => {
    // The same limit counters in every thread: a key's budget is the process's, not each thread's.
    const worker = new Worker(
      threadEntry(import.meta.url, './listener-thread', './listener-thread-entry.mjs'),
      {
        workerData: { limitMemory: processLimitTable().memory },
      },
    );
    workers.push(worker);
    return new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new Error(`listener thread exited with code ${code} before listening`)),
      );
    });
  });
  const stop = async () => {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => void worker.terminate().then(() => resolve()), STOP_GRACE_MS);
            worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            worker.postMessage('stop');
          }),
      ),
    );
  };
  try {
    await Promise.all(started);
  } catch (error) {
    await stop();
    throw error;
  }
  let stopping = false;
  for (const worker of workers) {
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    // A thread lost after start-up would silently shrink capacity: stop the process so its supervisor restarts it whole.
    worker.on('error', (error) => log.error({ err: error }, 'listener thread failed'));
    worker.on('exit', (code) => {
      if (stopping) return;
      log.fatal({ code }, 'a listener thread exited unexpectedly; stopping the gateway');
      process.exit(1);
    });
  }
  log.info({ threads: count + 1 }, `serving from ${count + 1} listener threads`);
  return {
    stop: () => {
      stopping = true;
      return stop();
    },
  };
}
