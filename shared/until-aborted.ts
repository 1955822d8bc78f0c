/**
 * Waiting on work with a way to stop waiting: both processes give up on a call at its
 * deadline or cancel while the work itself runs on (a broker call in the worker, a model
 * run in the gateway's embedding thread, neither of which can be stopped safely midway).
 */

/** Settles with `work`, or rejects with the signal's reason when it fires first; `work` keeps running. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody waits on `work` any more: its failure must not surface as an unhandled rejection.
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
