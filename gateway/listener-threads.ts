import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { threadEntry } from '../shared/thread-entry.ts';
import { DRAIN_MS } from './instance.ts';
import { processLimitTable } from './limits/shared-table.ts';

/** What a listener thread tells the main thread. */
export type ThreadMessage =
  | { t: 'ready'; port: number }
  | { t: 'audit'; line: string }
  | { t: 'metrics'; id: number; data: unknown[] };

export interface ListenerThreads {
  /** Each thread's metrics (prom-client JSON), for the one scrape the main thread answers. */
  metrics(timeoutMs: number): Array<Promise<unknown[]>>;
  stop(): Promise<void>;
}

export interface ThreadOptions {
  /** Audit lines the threads wrote (AUDIT_LOG). */
  onAudit?: (line: string) => void;
  /** A terminal on stdout: threads print like the main thread. */
  prettyLogs?: boolean;
}

/** Each thread drains like the main one (DRAIN_MS), with a little room to close. */
const STOP_GRACE_MS = DRAIN_MS + 2_000;

/** Starts `count` extra listener threads on the configured port and waits until each listens. */
export async function startListenerThreads(
  count: number,
  log: Logger,
  options: ThreadOptions = {},
): Promise<ListenerThreads> {
  const workers: Worker[] = [];
  const waiting = new Map<number, (data: unknown[]) => void>();
  const started = Array.from({ length: count }, () => {
    const { worker, listening } = startThread(options, waiting);
    workers.push(worker);
    return listening;
  });
  try {
    await Promise.all(started);
  } catch (error) {
    await stopThreads(workers);
    throw error;
  }
  const state = { stopping: false };
  watchThreads(workers, log, state);
  log.info({ threads: count + 1 }, `serving from ${count + 1} listener threads`);
  let nextId = 1;
  return {
    metrics: (timeoutMs) => workers.map((worker) => askMetrics(worker, nextId++, waiting, timeoutMs)),
    stop: () => {
      state.stopping = true;
      return stopThreads(workers);
    },
  };
}

/** One listener thread, and a promise that settles when it listens or fails to. */
function startThread(
  options: ThreadOptions,
  waiting: Map<number, (data: unknown[]) => void>,
): { worker: Worker; listening: Promise<void> } {
  // The same limit counters in every thread: a key's budget is the process's, not each thread's.
  const worker = new Worker(
    threadEntry(import.meta.url, './listener-thread', './listener-thread-entry.mjs'),
    {
      workerData: { limitMemory: processLimitTable().memory, prettyLogs: options.prettyLogs ?? false },
    },
  );
  const listening = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: ThreadMessage) => {
      if (message.t === 'ready') resolve();
      else if (message.t === 'audit') options.onAudit?.(message.line);
      else if (message.t === 'metrics') {
        waiting.get(message.id)?.(message.data);
        waiting.delete(message.id);
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`listener thread exited with code ${code} before listening`)),
    );
  });
  return { worker, listening };
}

/** Asks each thread to drain and close, terminating one that has not within STOP_GRACE_MS. */
async function stopThreads(workers: Worker[]): Promise<void> {
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
}

/** Replaces the start-up listeners with the ones for a running thread. */
function watchThreads(workers: Worker[], log: Logger, state: { stopping: boolean }): void {
  for (const worker of workers) {
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    // A thread lost after start-up would silently shrink capacity: stop the process so its supervisor restarts it whole.
    worker.on('error', (error) => log.error({ err: error }, 'listener thread failed'));
    worker.on('exit', (code) => {
      if (state.stopping) return;
      log.fatal({ code }, 'a listener thread exited unexpectedly; stopping the gateway');
      process.exit(1);
    });
  }
}

/** One thread's metrics, answered under `id` through `waiting`, or a rejection after `timeoutMs`. */
function askMetrics(
  worker: Worker,
  id: number,
  waiting: Map<number, (data: unknown[]) => void>,
  timeoutMs: number,
): Promise<unknown[]> {
  return new Promise<unknown[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`a listener thread sent no metrics within ${timeoutMs} ms`));
    }, timeoutMs);
    waiting.set(id, (data) => {
      clearTimeout(timer);
      resolve(data);
    });
    worker.postMessage({ t: 'metrics', id });
  });
}
