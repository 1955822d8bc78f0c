/**
 * A call's deadline and its caller's cancel as one AbortSignal, held by a plain timer.
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the composite holds
 * its sources only weakly and a timeout signal nobody listens to directly is held by nothing
 * else, so a garbage collection during the wait drops it and the deadline never fires
 * (nodejs/node#57736; Node 22 and 24 keep it). A hung upstream then held its caller until the
 * client gave up (docs/decisions/0144-upstream-deadline-timer.md). Here the timer's closure
 * holds the controller, so the deadline lasts as long as the timer does.
 */

export interface Deadline {
  /** Aborts with the caller's reason when it cancels, or a TimeoutError at the deadline. */
  signal: AbortSignal;
  /** Stops the timer and lets go of the caller's signal: call it once the work is over. */
  clear(): void;
}

export function startDeadline(caller: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  const onCancel = () => controller.abort(caller.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  if (caller.aborted) onCancel();
  else caller.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      caller.removeEventListener('abort', onCancel);
    },
  };
}

/**
 * Settles as `work` does, or rejects with `onAbort()` as soon as `signal` fires, whatever
 * `work` is waiting on at that moment; `work` is left to end by itself. The answer's time then
 * rests on this listener alone, not on every await inside `work` honouring the signal: fetch
 * may drop an abort meant for a body still being read (nodejs/node#55428).
 */
export function settleWithin<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onAbort());
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
