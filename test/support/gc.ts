/**
 * Garbage collection on demand, for claims that must survive one. A deadline or a cancel
 * held only weakly is lost at the next collection, and whether one comes during a wait of a
 * few seconds depends on the machine: such a bug passed most runs and hung one in a fresh
 * CI clone. Collecting every few milliseconds while the call is pending makes it fail every
 * run instead.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

export function collectGarbage(): void {
  if (!gc) {
    // The flag set at run time reaches contexts made after it: a fresh one hands out `gc`.
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** Settles as `work` does, with a full collection every `everyMs` until then. */
export async function whileCollecting<T>(work: Promise<T>, everyMs = 50): Promise<T> {
  collectGarbage();
  const timer = setInterval(collectGarbage, everyMs);
  // A test that hangs on `work` ends at its own timeout; this timer must not keep it running.
  timer.unref();
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
