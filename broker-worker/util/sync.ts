/** Two small coordination tools for code that waits on in-process state. */

/** Wakes every waiter when something changed; waiters re-check their own condition. */
export class ChangeSignal {
  private waiters = new Set<() => void>();

  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves on the next notify, after `ms`, or when any of `signals` aborts, whichever is first. */
  wait(ms: number, ...signals: Array<AbortSignal | undefined>): Promise<void> {
    if (ms <= 0 || signals.some((signal) => signal?.aborted)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const signal of signals) signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const signal of signals) signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}

/** Runs async sections one at a time, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(section: () => Promise<T>): Promise<T> {
    const result = this.tail.then(section, section);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
